-- analysis-health: argoproj.io/Rollout health that carries the verdict of the Rollout's AnalysisRuns.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Argo CD v2 parses the script on every evaluation and runs it on every reconcile, so the parsed path
-- covers a Rollout with no analysis in flight or failed; the analysis rules, and the code for controllers
-- older than v1.0, sit in long strings compiled only for the objects that need them.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local function tbl(v)
  if type(v) == "table" then
    return v
  end
  return {}
end

-- Generation gates, as Argo CD's built-in script: until the controller has observed the current spec,
-- every status field (phase and analysis run statuses alike) describes the previous revision. A
-- non-numeric or larger observedGeneration is a pre-v0.10 hash: nothing to compare.
local hs = { status = "Progressing", message = "Waiting for rollout spec update to be observed" }
local st = obj.status
if type(st) ~= "table" then
  return hs
end
local md, sp = tbl(obj.metadata), tbl(obj.spec)
local observed, generation = tonumber(st.observedGeneration), tonumber(md.generation)
if observed ~= nil and generation ~= nil and observed < generation then
  return hs
end
local an = md.annotations
if sp.workloadRef ~= nil and type(an) == "table"
    and tonumber(an["rollout.argoproj.io/workload-generation"]) ~= tonumber(st.workloadObservedGeneration) then
  return hs
end

local c, b = tbl(st.canary), tbl(st.blueGreen)
local phase, message = st.phase, st.message
if type(message) ~= "string" then
  message = ""
end

-- The four places where the controller copies the current AnalysisRun's name, phase and message, the
-- current experiment, and the pause an inconclusive result causes: when none of them holds anything but
-- a passed analysis, the controller's phase is the whole story.
local function settled(e)
  return type(e) ~= "table" or e.status == "Successful"
end
local quiet = settled(c.currentStepAnalysisRunStatus) and settled(c.currentBackgroundAnalysisRunStatus)
    and settled(b.prePromotionAnalysisRunStatus) and settled(b.postPromotionAnalysisRunStatus)
    and (c.currentExperiment == nil or c.currentExperiment == "")
for _, p in ipairs(tbl(st.pauseConditions)) do
  local reason = tbl(p).reason
  quiet = quiet and reason ~= "InconclusiveAnalysisRun" and reason ~= "InconclusiveExperiment"
end

if not quiet then
  local verdict, promotedDespite = loadstring([[
local st, c, b, phase, message, inconclusiveStatus, tbl = ...
local function str(v)
  local t = type(v)
  if t == "string" then
    return v
  end
  if t == "number" or t == "boolean" then
    return tostring(v)
  end
  return ""
end
phase = str(phase)

-- Blue-green keeps its pre/post-promotion statuses until the next revision, even after a forced full
-- promotion: once the revision is stable and the controller calls it Healthy, a Failed entry records a
-- verdict someone overrode, not one still pending.
local promoted = phase == "Healthy" and str(st.stableRS) ~= "" and str(st.stableRS) == str(st.currentPodHash)
local failed, busy, inconclusive, overridden = {}, {}, {}, {}
for _, r in ipairs({
  { "Step analysis", c.currentStepAnalysisRunStatus },
  { "Background analysis", c.currentBackgroundAnalysisRunStatus },
  { "Pre-promotion analysis", b.prePromotionAnalysisRunStatus, true },
  { "Post-promotion analysis", b.postPromotionAnalysisRunStatus, true },
}) do
  local e = r[2]
  if type(e) == "table" then
    local status, name, m = str(e.status), str(e.name), str(e.message)
    local d = r[1] .. " run"
    if name ~= "" then
      d = d .. " " .. name
    end
    if status == "" then
      d = d .. " Pending"
    else
      d = d .. " " .. status
    end
    if m ~= "" then
      d = d .. ": " .. m
    end
    if status == "Failed" or status == "Error" then
      if promoted and r[3] then
        table.insert(overridden, d)
      else
        table.insert(failed, d)
      end
    elseif status == "Inconclusive" then
      table.insert(inconclusive, d)
    elseif status ~= "Successful" then
      -- "", Pending, Running, and anything a newer controller may add: not a verdict yet
      table.insert(busy, d)
    end
  end
end

local pausedRun, pausedExperiment = false, false
for _, p in ipairs(tbl(st.pauseConditions)) do
  local reason = str(tbl(p).reason)
  pausedRun = pausedRun or reason == "InconclusiveAnalysisRun"
  pausedExperiment = pausedExperiment or reason == "InconclusiveExperiment"
end
local isInconclusive = #inconclusive > 0 or pausedRun or pausedExperiment
local inconclusiveMessage = table.concat(inconclusive, "; ")
if #inconclusive == 0 and pausedExperiment then
  inconclusiveMessage = "Experiment analysis was inconclusive: rollout paused (InconclusiveExperiment)"
elseif #inconclusive == 0 then
  inconclusiveMessage = "Analysis was inconclusive: rollout paused (InconclusiveAnalysisRun)"
end

if #failed > 0 then
  return { status = "Degraded", message = table.concat(failed, "; ") }
end
if inconclusiveStatus == "Degraded" and isInconclusive then
  return { status = "Degraded", message = inconclusiveMessage }
end
if phase == "Degraded" then
  return { status = "Degraded", message = message }
end
-- Controllers before v1.0 write no phase: their Degraded verdicts are the conditions Argo CD's legacy
-- logic reads, and they outrank an inconclusive pause or a run in flight here exactly as a phase does.
if phase == "" then
  for _, condition in ipairs(tbl(st.conditions)) do
    local cd = tbl(condition)
    local ctype, reason = str(cd.type), str(cd.reason)
    if ctype == "InvalidSpec" or (ctype == "Progressing" and (reason == "RolloutAborted" or reason == "ProgressDeadlineExceeded")) then
      return { status = "Degraded", message = str(cd.message) }
    end
  end
end
if str(c.currentExperiment) ~= "" then
  table.insert(busy, "Experiment " .. str(c.currentExperiment) .. " is running")
end
-- An inconclusive verdict pauses the rollout until someone promotes, retries or aborts it; runs still
-- measuring meanwhile (a background run without count) do not make it progress, so they are only listed.
if isInconclusive then
  if #busy > 0 then
    inconclusiveMessage = inconclusiveMessage .. "; " .. table.concat(busy, "; ")
  end
  return { status = inconclusiveStatus, message = inconclusiveMessage }
end
if #busy > 0 then
  return { status = "Progressing", message = table.concat(busy, "; ") }
end
if #overridden > 0 then
  return nil, "Promoted despite " .. table.concat(overridden, "; ")
end
return nil
]])(st, c, b, phase, message, inconclusiveStatus, tbl)
  if verdict ~= nil then
    return verdict
  end
  message = promotedDespite or message
end

-- Argo Rollouts v1.0+ records phase and message; surface them as Argo CD's built-in script does.
local status = ({ Paused = "Suspended", Healthy = "Healthy", Progressing = "Progressing", Degraded = "Degraded" })[phase]
if status ~= nil then
  return { status = status, message = message }
end

-- A phase this script does not know, or none: controllers older than v1.0 write no phase, and get Argo
-- CD's built-in legacy logic.
return loadstring([[
local st, sp, c, b, tbl, phase, message = ...
local function str(v)
  local t = type(v)
  if t == "string" then
    return v
  end
  if t == "number" or t == "boolean" then
    return tostring(v)
  end
  return ""
end
if str(phase) ~= "" then
  return { status = "Progressing", message = "Unrecognised rollout phase " .. str(phase) .. ": " .. message }
end

for _, condition in ipairs(tbl(st.conditions)) do
  local ctype, reason = str(tbl(condition).type), str(tbl(condition).reason)
  if ctype == "InvalidSpec" or (ctype == "Progressing" and (reason == "RolloutAborted" or reason == "ProgressDeadlineExceeded")) then
    return { status = "Degraded", message = str(condition.message) }
  end
end
if (type(st.pauseConditions) == "table" and #st.pauseConditions > 0) or sp.paused == true then
  return { status = "Suspended", message = "Rollout is paused" }
end
if st.currentPodHash == nil then
  return { status = "Progressing", message = "Waiting for rollout to finish: status has not been reconciled." }
end
local function number(v, default)
  return tonumber(v) or default
end
local desired, replicas = number(sp.replicas, 1), number(st.replicas, 0)
local updated, available = number(st.updatedReplicas, 0), number(st.availableReplicas, 0)
if updated < desired then
  return { status = "Progressing", message = "Waiting for roll out to finish: More replicas need to be updated" }
end
if available < updated then
  return { status = "Progressing", message = "Waiting for roll out to finish: updated replicas are still becoming available" }
end
-- v0.8 moved status.canary.stableRS to status.stableRS
local stableRS = st.stableRS
if stableRS == nil then
  stableRS = c.stableRS
end
stableRS = str(stableRS)
local hash = str(st.currentPodHash)
local strategy = tbl(sp.strategy)
if strategy.blueGreen ~= nil then
  if type(st.blueGreen) ~= "table" or str(b.activeSelector) ~= hash then
    return { status = "Progressing", message = "active service cutover pending" }
  end
  if stableRS ~= "" and stableRS ~= hash then
    return { status = "Progressing", message = "waiting for analysis to complete" }
  end
elseif strategy.canary ~= nil then
  if replicas > updated then
    return { status = "Progressing", message = "Waiting for roll out to finish: old replicas are pending termination" }
  end
  if stableRS == "" or stableRS ~= hash then
    return { status = "Progressing", message = "Waiting for rollout to finish steps" }
  end
end
return { status = "Healthy", message = "" }
]])(st, sp, c, b, tbl, phase, message)
