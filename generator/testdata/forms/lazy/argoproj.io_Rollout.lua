-- analysis-health argoproj.io/Rollout health, minified for Argo CD v2.14 (parses the script on every call); source: lua/argoproj.io/Rollout/health.lua
-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options
local st=obj.status
if type(st)=="table"then
local md,sp=obj.metadata,obj.spec
md=type(md)=="table"and md or{}
sp=type(sp)=="table"and sp or{}
local observed,generation,an=tonumber(st.observedGeneration),tonumber(md.generation),md.annotations
if not(observed and generation and observed<generation or sp.workloadRef~=nil and type(an)=="table"
and tonumber(an["rollout.argoproj.io/workload-generation"])~=tonumber(st.workloadObservedGeneration))then
local c,b,phase,message=st.canary,st.blueGreen,st.phase,st.message
c=type(c)=="table"and c or{}
b=type(b)=="table"and b or{}
if type(message)~="string"then
message=""
end
local function settled(e)
return type(e)~="table"or e.status=="Successful"
end
local quiet=settled(c.currentStepAnalysisRunStatus)and settled(c.currentBackgroundAnalysisRunStatus)
and settled(b.prePromotionAnalysisRunStatus)and settled(b.postPromotionAnalysisRunStatus)
and(c.currentExperiment==nil or c.currentExperiment=="")
local pauses=st.pauseConditions
if type(pauses)=="table"then
for _,p in ipairs(pauses)do
p=type(p)=="table"and p.reason
quiet=quiet and p~="InconclusiveAnalysisRun"and p~="InconclusiveExperiment"
end
end
if not quiet then
local verdict,promotedDespite=loadstring([[
local st,c,b,phase,message,inconclusiveStatus=...
local busy,full={},phase~="Healthy"and phase~="Paused"and phase~="Progressing"
local function str(v)
if v==nil or type(v)=="string"then
return v or""
end
full=true
return""
end
local function run(label,e)
if type(e)=="table"then
local status,name,m=str(e.status),str(e.name),str(e.message)
if status=="Failed"or status=="Error"or status=="Inconclusive"then
full=true
elseif status~="Successful"then
table.insert(busy,label .." run"..(name~=""and" "..name or"").." "..(status~=""and status or"Pending")
..(m~=""and": "..m or""))
end
end
end
run("Step analysis",c.currentStepAnalysisRunStatus)
run("Background analysis",c.currentBackgroundAnalysisRunStatus)
run("Pre-promotion analysis",b.prePromotionAnalysisRunStatus)
run("Post-promotion analysis",b.postPromotionAnalysisRunStatus)
local experiment=str(c.currentExperiment)
if experiment~=""then
table.insert(busy,"Experiment "..experiment .." is running")
end
local pauses=st.pauseConditions
for _,p in ipairs(type(pauses)=="table"and pauses or{})do
p=type(p)=="table"and p.reason
full=full or p=="InconclusiveAnalysisRun"or p=="InconclusiveExperiment"
end
if full then
return loadstring([==[
local st,c,b,phase,message,inconclusiveStatus=...
local function str(v)
local t=type(v)
return(t=="string"or t=="number"or t=="boolean")and tostring(v)or""
end
local function tbl(v)
return type(v)=="table"and v or{}
end
phase=str(phase)
local promoted=phase=="Healthy"and str(st.stableRS)~=""and str(st.stableRS)==str(st.currentPodHash)
local failed,busy,inconclusive,overridden={},{},{},{}
local function run(label,e,promotion)
if type(e)=="table"then
local status,name,m=str(e.status),str(e.name),str(e.message)
local d=label .." run"..(name~=""and" "..name or"").." "..(status~=""and status or"Pending")
..(m~=""and": "..m or"")
if status=="Failed"or status=="Error"then
table.insert(promoted and promotion and overridden or failed,d)
elseif status=="Inconclusive"then
table.insert(inconclusive,d)
elseif status~="Successful"then
table.insert(busy,d)
end
end
end
run("Step analysis",c.currentStepAnalysisRunStatus)
run("Background analysis",c.currentBackgroundAnalysisRunStatus)
run("Pre-promotion analysis",b.prePromotionAnalysisRunStatus,true)
run("Post-promotion analysis",b.postPromotionAnalysisRunStatus,true)
local pausedRun,pausedExperiment=false,false
for _,p in ipairs(tbl(st.pauseConditions))do
p=str(tbl(p).reason)
pausedRun=pausedRun or p=="InconclusiveAnalysisRun"
pausedExperiment=pausedExperiment or p=="InconclusiveExperiment"
end
local isInconclusive=#inconclusive>0 or pausedRun or pausedExperiment
local inconclusiveMessage=#inconclusive>0 and table.concat(inconclusive,"; ")
or pausedExperiment and"Experiment analysis was inconclusive: rollout paused (InconclusiveExperiment)"
or"Analysis was inconclusive: rollout paused (InconclusiveAnalysisRun)"
if#failed>0 then
return{status="Degraded",message=table.concat(failed,"; ")}
end
if inconclusiveStatus=="Degraded"and isInconclusive then
return{status="Degraded",message=inconclusiveMessage}
end
if phase=="Degraded"then
return{status="Degraded",message=message}
end
if phase==""then
for _,cd in ipairs(tbl(st.conditions))do
cd=tbl(cd)
local ctype,reason=str(cd.type),str(cd.reason)
if ctype=="InvalidSpec"or ctype=="Progressing"and(reason=="RolloutAborted"or reason=="ProgressDeadlineExceeded")then
return{status="Degraded",message=str(cd.message)}
end
end
end
if str(c.currentExperiment)~=""then
table.insert(busy,"Experiment "..str(c.currentExperiment).." is running")
end
if isInconclusive then
return{status=inconclusiveStatus,message=#busy>0 and inconclusiveMessage .."; "..table.concat(busy,"; ")or inconclusiveMessage}
end
if#busy>0 then
return{status="Progressing",message=table.concat(busy,"; ")}
end
if#overridden>0 then
return nil,"Promoted despite "..table.concat(overridden,"; ")
end
]==])(st,c,b,phase,message,inconclusiveStatus)
end
if#busy>0 then
return{status="Progressing",message=table.concat(busy,"; ")}
end
]])(st,c,b,phase,message,inconclusiveStatus)
if verdict~=nil then
return verdict
end
message=promotedDespite or message
end
if phase=="Paused"then
return{status="Suspended",message=message}
end
if phase=="Healthy"or phase=="Progressing"or phase=="Degraded"then
return{status=phase,message=message}
end
return loadstring([[
local st,sp,c,b,phase,message=...
local function str(v)
local t=type(v)
return(t=="string"or t=="number"or t=="boolean")and tostring(v)or""
end
local function tbl(v)
return type(v)=="table"and v or{}
end
if str(phase)~=""then
return{status="Progressing",message="Unrecognised rollout phase "..str(phase)..": "..message}
end
for _,cd in ipairs(tbl(st.conditions))do
local ctype,reason=str(tbl(cd).type),str(tbl(cd).reason)
if ctype=="InvalidSpec"or ctype=="Progressing"and(reason=="RolloutAborted"or reason=="ProgressDeadlineExceeded")then
return{status="Degraded",message=str(cd.message)}
end
end
if type(st.pauseConditions)=="table"and#st.pauseConditions>0 or sp.paused==true then
return{status="Suspended",message="Rollout is paused"}
end
if st.currentPodHash==nil then
return{status="Progressing",message="Waiting for rollout to finish: status has not been reconciled."}
end
local replicas,updated,available=tonumber(st.replicas)or 0,tonumber(st.updatedReplicas)or 0,tonumber(st.availableReplicas)or 0
if updated<(tonumber(sp.replicas)or 1)then
return{status="Progressing",message="Waiting for roll out to finish: More replicas need to be updated"}
end
if available<updated then
return{status="Progressing",message="Waiting for roll out to finish: updated replicas are still becoming available"}
end
local stableRS,hash,strategy=st.stableRS,str(st.currentPodHash),tbl(sp.strategy)
if stableRS==nil then
stableRS=c.stableRS
end
stableRS=str(stableRS)
if strategy.blueGreen~=nil then
if type(st.blueGreen)~="table"or str(b.activeSelector)~=hash then
return{status="Progressing",message="active service cutover pending"}
end
if stableRS~=""and stableRS~=hash then
return{status="Progressing",message="waiting for analysis to complete"}
end
elseif strategy.canary~=nil then
if replicas>updated then
return{status="Progressing",message="Waiting for roll out to finish: old replicas are pending termination"}
end
if stableRS==""or stableRS~=hash then
return{status="Progressing",message="Waiting for rollout to finish steps"}
end
end
return{status="Healthy",message=""}
]])(st,sp,c,b,phase,message)
end
end
return{status="Progressing",message="Waiting for rollout spec update to be observed"}
