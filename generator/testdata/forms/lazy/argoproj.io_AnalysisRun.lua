-- analysis-health argoproj.io/AnalysisRun health, minified for Argo CD v2.14 (parses the script on every call); source: lua/argoproj.io/AnalysisRun/health.lua
-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options
local st=obj.status
if type(st)~="table"then
return{status="Progressing",message="Waiting for analysis run to finish: status has not been reconciled."}
end
local function s(v)
return v~=nil and type(v)~="table"and tostring(v)or""
end
local spec,phase,rare,progress,sep,wanted=type(obj.spec)=="table"and obj.spec or{},s(st.phase),false,"",": ",{}
local results=type(st.metricResults)=="table"and st.metricResults or{}
for _,m in ipairs(phase~="Successful"and type(spec.metrics)=="table"and spec.metrics or{})do
if type(m)=="table"and s(m.name)~=""then
wanted[s(m.name)]=s(m.count)
end
end
for _,r in ipairs(results)do
if type(r)=="table"then
local name,p=s(r.name),s(r.phase)
rare=rare or p=="Failed"or p=="Error"or p=="Inconclusive"and r.dryRun==true
if r.dryRun~=true and phase~="Successful"then
progress=progress ..sep ..name .." "..(tonumber(r.count)or 0)
..((wanted[name]or"")~=""and"/"..wanted[name]or"").." measurements"
..(p~=""and p~="Running"and" ("..p ..")"or"")
sep=", "
end
end
end
if not rare and phase=="Successful"then
return{status="Healthy",message=s(st.message)~=""and s(st.message)
or spec.terminate==true and"Analysis run terminated; every metric was within its limits"
or"Analysis run completed successfully"}
end
if not rare and(phase=="Running"or phase=="Pending"or phase=="")then
return{status="Progressing",message=(phase==""and"Analysis run is pending"or"Analysis run is running")
..progress}
end
return loadstring([==[
local st,spec,results,progress,s,inconclusiveStatus=...
local phase,message=s(st.phase),s(st.message)
local dryRun,decided="",false
for _,r in ipairs(results)do
if type(r)=="table"then
local p=s(r.phase)
if r.dryRun~=true then
decided=decided or p=="Failed"or p=="Error"
elseif p=="Failed"or p=="Error"or p=="Inconclusive"then
dryRun=(dryRun==""and""or dryRun ..", ").."metric \""..s(r.name).."\" "..p
end
end
end
dryRun=dryRun~=""and"; dry-run "..dryRun .." (not counted)"or""
local status,only
if phase=="Failed"or phase=="Error"or phase=="Inconclusive"then
status=phase=="Inconclusive"and inconclusiveStatus or"Degraded"
only=message==""and phase
elseif phase=="Successful"then
status="Healthy"
message=message~=""and message or spec.terminate==true and"Analysis run terminated; every metric was within its limits"
or"Analysis run completed successfully"
elseif decided and(phase==""or phase=="Pending"or phase=="Running")then
status,only="Degraded",true
else
status="Progressing"
message=(phase=="Running"or phase=="Pending")and"Analysis run is running"
or phase==""and"Analysis run is pending"or"Analysis run phase "..phase .." is not recognised"
message=message ..progress
end
if only then
local out=loadstring([=[
local spec,results,s,only=...
local specs,out={},""
for _,m in ipairs(type(spec.metrics)=="table"and spec.metrics or{})do
if type(m)=="table"and s(m.name)~=""then
specs[s(m.name)]=m
end
end
for _,r in ipairs(results)do
local p=type(r)=="table"and r.dryRun~=true and s(r.phase)
if p==only or only==true and(p=="Failed"or p=="Error")then
local m=specs[s(r.name)]or{}
local shown,counter,field,limit="failed","failed","failureLimit","0"
if p=="Error"then
shown,counter,field,limit="consecutiveErrors","consecutiveError","consecutiveErrorLimit","4"
elseif p=="Inconclusive"then
shown,counter,field,limit="inconclusive","inconclusive","inconclusiveLimit","0"
end
limit=s(m[field])~=""and s(m[field])or limit
local n,ln=tonumber(r[counter])or 0,tonumber(limit)
out=(out==""and""or out .."; ").."Metric \""..s(r.name).."\" assessed "..p
..((ln==nil or ln>=0 and n>ln)and" due to "..shown .." ("..n ..") > "..field .." ("..limit ..")"
or s(m.consecutiveSuccessLimit)~=""and" due to consecutiveSuccess ("..(tonumber(r.consecutiveSuccess)or 0)
..") < consecutiveSuccessLimit ("..s(m.consecutiveSuccessLimit)..")"or"")
..(s(r.message)~=""and": \"Error Message: "..s(r.message).."\""or"")
end
end
return out
]=])(spec,results,s,only)
if only==true then
message=out .." (run terminating)"
else
message=out~=""and out or phase=="Failed"and"Analysis run failed"
or phase=="Error"and"Analysis run had an error"or"Analysis run was inconclusive"
end
end
return{status=status,message=message ..dryRun}
]==])(st,spec,results,progress,s,inconclusiveStatus)
