-- analysis-health argoproj.io/Experiment health, minified for Argo CD v2.14 (parses the script on every call); source: lua/argoproj.io/Experiment/health.lua
-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options
local st=obj.status
if type(st)~="table"then
return{status="Progressing",message="Waiting for experiment to finish: status has not been reconciled."}
end
if st.phase=="Successful"then
return{status="Healthy",message="Experiment is successful"}
end
local function s(v)
return v~=nil and type(v)~="table"and tostring(v)or""
end
local phase,runs,bad,waiting=s(st.phase),type(st.analysisRuns)=="table"and st.analysisRuns or{},false,false
for _,r in ipairs(runs)do
if type(r)=="table"then
local p=s(r.phase)
bad=bad or p=="Failed"or p=="Error"
waiting=waiting or p==""or p=="Pending"or p=="Running"
end
end
if not bad and phase=="Running"and not waiting then
return{status="Progressing",message="Experiment is running"}
elseif not bad and phase=="Running"then
return loadstring([[
local runs,s=...
local waiting,sep="",""
for _,r in ipairs(runs)do
local p=type(r)=="table"and s(r.phase)
if p==""or p=="Pending"or p=="Running"then
waiting=waiting ..sep .."analysis "..s(r.name)..(s(r.analysisRun)~=""and" (AnalysisRun "..s(r.analysisRun)..")"or"")
.." "..(p~=""and p or"Pending")..(s(r.message)~=""and": "..s(r.message)or"")
sep="; "
end
end
return{status="Progressing",message="Experiment is running: waiting for "..waiting}
]])(runs,s)
elseif not bad and(phase=="Pending"or phase=="")then
return{status="Progressing",message="Experiment is pending"}
end
return loadstring([[
local st,phase,runs,s,inconclusiveStatus=...
local bad,inconclusive="",""
for _,r in ipairs(runs)do
if type(r)=="table"then
local p=s(r.phase)
local text="analysis "..s(r.name)..(s(r.analysisRun)~=""and" (AnalysisRun "..s(r.analysisRun)..")"or"")
.." "..p ..(s(r.message)~=""and": "..s(r.message)or"")
if p=="Failed"or p=="Error"then
bad=(bad==""and""or bad .."; ")..text
elseif p=="Inconclusive"then
inconclusive=(inconclusive==""and""or inconclusive .."; ")..text
end
end
end
if phase=="Failed"or phase=="Error"or phase=="Inconclusive"then
local runs=phase=="Inconclusive"and inconclusive or bad
runs=runs~=""and runs or s(st.message)
local base=phase=="Failed"and"Experiment has failed"or phase=="Error"and"Experiment had an error"
or"Experiment was inconclusive"
return{status=phase=="Inconclusive"and inconclusiveStatus or"Degraded",message=runs==""and base or base ..": "..runs}
elseif bad~=""then
return{status="Degraded",message="Experiment analysis failed: "..bad}
end
return{status="Progressing",message="Experiment phase "..phase .." is not recognised"}
]])(st,phase,runs,s,inconclusiveStatus)
