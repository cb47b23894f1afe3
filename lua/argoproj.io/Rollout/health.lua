-- analysis-health: argoproj.io/Rollout health that carries the verdict of the Rollout's AnalysisRuns.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Argo CD v2 parses the whole script on every evaluation, long strings included, so the parsed path is
-- as few tokens as a Rollout with no analysis in flight or failed needs; the analysis rules, and the code
-- for controllers older than v1.0, sit in long strings compiled only for the objects that need them. The
-- parsed path builds no table it does not return, which is what v3.6 (compiled once) pays for.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
local humanGate = "Suspended"
-- analysis-health:end-options

-- Generation gates, as Argo CD's built-in script: until the controller has observed the current spec,
-- every status field (phase and analysis run statuses alike) describes the previous revision. A
-- non-numeric or larger observedGeneration is a pre-v0.10 hash: nothing to compare.
local st = obj.status
if type(st) == "table" then
  local md, sp = obj.metadata, obj.spec
  md = type(md) == "table" and md or {}
  sp = type(sp) == "table" and sp or {}
  local observed, generation, an = tonumber(st.observedGeneration), tonumber(md.generation), md.annotations
  if not (observed and generation and observed < generation or sp.workloadRef ~= nil and type(an) == "table"
      and tonumber(an["rollout.argoproj.io/workload-generation"]) ~= tonumber(st.workloadObservedGeneration)) then
    local c, b, phase, message = st.canary, st.blueGreen, st.phase, st.message
    c = type(c) == "table" and c or {}
    b = type(b) == "table" and b or {}
    if type(message) ~= "string" then
      message = ""
    end

    -- The four places where the controller copies the current AnalysisRun's name, phase and message, the
    -- current experiment, and the pause an inconclusive result causes: when none of them holds anything
    -- but a passed analysis, the controller's phase is the whole story.
    local function settled(e)
      return type(e) ~= "table" or e.status == "Successful"
    end
    local quiet = settled(c.currentStepAnalysisRunStatus) and settled(c.currentBackgroundAnalysisRunStatus)
        and settled(b.prePromotionAnalysisRunStatus) and settled(b.postPromotionAnalysisRunStatus)
        and (c.currentExperiment == nil or c.currentExperiment == "")
    local pauses, held = st.pauseConditions
    if type(pauses) == "table" then
      for _, p in ipairs(pauses) do
        p = type(p) == "table" and p.reason
        held = held or p == "InconclusiveAnalysisRun" or p == "InconclusiveExperiment"
      end
    end

    -- Two chunks: the short one for analysis in flight, the full rules for a verdict (Degraded, an
    -- inconclusive pause) or whatever the short one declines.
    if not quiet or held then
      local verdict, promotedDespite = not held and phase ~= "Degraded" and loadstring([[
local st = ...
local c, b, phase = st.canary, st.blueGreen, st.phase
c = type(c) == "table" and c or {}
b = type(b) == "table" and b or {}
-- Analysis in flight, the common case of a Rollout that is not quiet: every run passed or still
-- measuring, no inconclusive pause (the caller checked), a v1.0+ phase that is not Degraded. Then the
-- verdict is Progressing with the runs in flight listed, and only that needs compiling; anything else, or
-- any field of an unexpected type, returns false: the caller takes the full rules.
local busy, full = {}, phase ~= "Healthy" and phase ~= "Paused" and phase ~= "Progressing"
local function str(v)
  if v == nil or type(v) == "string" then
    return v or ""
  end
  full = true
  return ""
end
local function run(label, e)
  if type(e) == "table" then
    local status, name, m = str(e.status), str(e.name), str(e.message)
    if status == "Failed" or status == "Error" or status == "Inconclusive" then
      full = true
    elseif status ~= "Successful" then
      table.insert(busy, label .. " run" .. (name ~= "" and " " .. name or "") .. " " .. (status ~= "" and status or "Pending")
          .. (m ~= "" and ": " .. m or ""))
    end
  end
end
run("Step analysis", c.currentStepAnalysisRunStatus)
run("Background analysis", c.currentBackgroundAnalysisRunStatus)
run("Pre-promotion analysis", b.prePromotionAnalysisRunStatus)
run("Post-promotion analysis", b.postPromotionAnalysisRunStatus)
local experiment = str(c.currentExperiment)
if experiment ~= "" then
  table.insert(busy, "Experiment " .. experiment .. " is running")
end
if full then
  return false
end
if #busy > 0 then
  return { status = "Progressing", message = table.concat(busy, "; ") }
end
]])(st)
      if verdict == false then
        verdict, promotedDespite = loadstring([[
local st, inconclusiveStatus = ...
local function str(v)
  local t = type(v)
  return (t == "string" or t == "number" or t == "boolean") and tostring(v) or ""
end
local function tbl(v)
  return type(v) == "table" and v or {}
end
local c, b, phase, message = tbl(st.canary), tbl(st.blueGreen), str(st.phase), st.message
if type(message) ~= "string" then
  message = ""
end

-- Blue-green keeps its pre/post-promotion statuses until the next revision, even after a forced full
-- promotion: once the revision is stable and the controller calls it Healthy, a Failed entry records a
-- verdict someone overrode, not one still pending.
local promoted = phase == "Healthy" and str(st.stableRS) ~= "" and str(st.stableRS) == str(st.currentPodHash)
local failed, busy, inconclusive, overridden = {}, {}, {}, {}
local function run(label, e, promotion)
  if type(e) == "table" then
    local status, name, m = str(e.status), str(e.name), str(e.message)
    local d = label .. " run" .. (name ~= "" and " " .. name or "") .. " " .. (status ~= "" and status or "Pending")
        .. (m ~= "" and ": " .. m or "")
    if status == "Failed" or status == "Error" then
      table.insert(promoted and promotion and overridden or failed, d)
    elseif status == "Inconclusive" then
      table.insert(inconclusive, d)
    elseif status ~= "Successful" then
      -- "", Pending, Running, and anything a newer controller may add: not a verdict yet
      table.insert(busy, d)
    end
  end
end
run("Step analysis", c.currentStepAnalysisRunStatus)
run("Background analysis", c.currentBackgroundAnalysisRunStatus)
run("Pre-promotion analysis", b.prePromotionAnalysisRunStatus, true)
run("Post-promotion analysis", b.postPromotionAnalysisRunStatus, true)

local pausedRun, pausedExperiment = false, false
for _, p in ipairs(tbl(st.pauseConditions)) do
  p = str(tbl(p).reason)
  pausedRun = pausedRun or p == "InconclusiveAnalysisRun"
  pausedExperiment = pausedExperiment or p == "InconclusiveExperiment"
end
local isInconclusive = #inconclusive > 0 or pausedRun or pausedExperiment
local inconclusiveMessage = #inconclusive > 0 and table.concat(inconclusive, "; ")
    or pausedExperiment and "Experiment analysis was inconclusive: rollout paused (InconclusiveExperiment)"
    or "Analysis was inconclusive: rollout paused (InconclusiveAnalysisRun)"

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
  for _, cd in ipairs(tbl(st.conditions)) do
    cd = tbl(cd)
    local ctype, reason = str(cd.type), str(cd.reason)
    if ctype == "InvalidSpec" or ctype == "Progressing" and (reason == "RolloutAborted" or reason == "ProgressDeadlineExceeded") then
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
  return { status = inconclusiveStatus, message = #busy > 0 and inconclusiveMessage .. "; " .. table.concat(busy, "; ") or inconclusiveMessage }
end
if #busy > 0 then
  return { status = "Progressing", message = table.concat(busy, "; ") }
end
if #overridden > 0 then
  return nil, "Promoted despite " .. table.concat(overridden, "; ")
end
]])(st, inconclusiveStatus)
      end
      if verdict ~= nil then
        return verdict
      end
      message = promotedDespite or message
    end

    -- Argo Rollouts v1.0+ records phase and message; surface them as Argo CD's built-in script does.
    if phase == "Paused" then
      -- Option humanGate=Healthy (generate --human-gate healthy): a pause only a person ends, after every
      -- analysis so far passed, lets the sync and Kargo's Stage complete while the person decides. The
      -- plugin, which Kargo verifies with, judges with the default and waits for full promotion.
      local gate = humanGate == "Healthy" and quiet and not held and sp.paused ~= true and loadstring([[
local st, sp, message = ...
local function str(v)
  local t = type(v)
  return (t == "string" or t == "number" or t == "boolean") and tostring(v) or ""
end
local function tbl(v)
  return type(v) == "table" and v or {}
end
local strategy, c, b, passed = tbl(sp.strategy), tbl(st.canary), tbl(st.blueGreen), {}
-- Only the pause the strategy itself makes indefinite: any other pause condition (an inconclusive
-- analysis, a second reason) is not a person's gate after a passed analysis.
local reason, n = "", 0
for _, p in ipairs(tbl(st.pauseConditions)) do
  reason, n = str(tbl(p).reason), n + 1
end
if n ~= 1 then
  return
end
local where
if type(strategy.canary) == "table" and reason == "CanaryPauseStep" then
  -- The controller ends a canary pause on its own only when it has a duration (pause.go
  -- CompletedCanaryPauseStep). The Rollout's status keeps no step run once its step is done, so a passed
  -- step analysis shows as a step before the current one: the controller moves past it when its run passed
  -- (or when a person skipped it, which only the runs tell: the plugin reads them).
  local steps, i = tbl(strategy.canary.steps), tonumber(st.currentStepIndex)
  local step = i and tbl(steps[i + 1])
  if not step or type(step.pause) ~= "table" or step.pause.duration ~= nil then
    return
  end
  for j = 1, i do
    local s = tbl(steps[j])
    if type(s.analysis) == "table" then
      table.insert(passed, "steps[" .. (j - 1) .. "] analysis")
    elseif type(s.experiment) == "table" and type(s.experiment.analyses) == "table" and #s.experiment.analyses > 0 then
      table.insert(passed, "steps[" .. (j - 1) .. "] experiment analysis")
    end
  end
  local bg = tbl(c.currentBackgroundAnalysisRunStatus)
  if bg.status == "Successful" then
    table.insert(passed, "background analysis run " .. str(bg.name))
  end
  where = "paused at steps[" .. i .. "], a pause without duration"
elseif type(strategy.blueGreen) == "table" and reason == "BlueGreenPause" and strategy.blueGreen.autoPromotionEnabled == false then
  -- Without auto-promotion the controller never ends this pause (pause.go CompletedBlueGreenPause), and it
  -- pauses only once the pre-promotion analysis completed (bluegreen.go reconcileBlueGreenPause).
  local pre = tbl(b.prePromotionAnalysisRunStatus)
  if pre.status == "Successful" then
    table.insert(passed, "pre-promotion analysis run " .. str(pre.name))
  end
  where = "paused before promotion (autoPromotionEnabled: false)"
end
-- No analysis behind the pause: nothing passed, so it stays Suspended.
if where and #passed > 0 then
  return { status = "Healthy", message = "waiting for a person; analysis passed (" .. table.concat(passed, ", ") .. "); " .. where .. ": " .. message }
end
]])(st, sp, message)
      return gate or { status = "Suspended", message = message }
    end
    if phase == "Healthy" or phase == "Progressing" or phase == "Degraded" then
      return { status = phase, message = message }
    end

    -- A phase this script does not know, or none: controllers older than v1.0 write no phase, and get
    -- Argo CD's built-in legacy logic.
    return loadstring([[
local st, sp = ...
local function str(v)
  local t = type(v)
  return (t == "string" or t == "number" or t == "boolean") and tostring(v) or ""
end
local function tbl(v)
  return type(v) == "table" and v or {}
end
local c, b, phase, message = tbl(st.canary), tbl(st.blueGreen), st.phase, st.message
if type(message) ~= "string" then
  message = ""
end
if str(phase) ~= "" then
  return { status = "Progressing", message = "Unrecognised rollout phase " .. str(phase) .. ": " .. message }
end
for _, cd in ipairs(tbl(st.conditions)) do
  local ctype, reason = str(tbl(cd).type), str(tbl(cd).reason)
  if ctype == "InvalidSpec" or ctype == "Progressing" and (reason == "RolloutAborted" or reason == "ProgressDeadlineExceeded") then
    return { status = "Degraded", message = str(cd.message) }
  end
end
if type(st.pauseConditions) == "table" and #st.pauseConditions > 0 or sp.paused == true then
  return { status = "Suspended", message = "Rollout is paused" }
end
if st.currentPodHash == nil then
  return { status = "Progressing", message = "Waiting for rollout to finish: status has not been reconciled." }
end
local replicas, updated, available = tonumber(st.replicas) or 0, tonumber(st.updatedReplicas) or 0, tonumber(st.availableReplicas) or 0
if updated < (tonumber(sp.replicas) or 1) then
  return { status = "Progressing", message = "Waiting for roll out to finish: More replicas need to be updated" }
end
if available < updated then
  return { status = "Progressing", message = "Waiting for roll out to finish: updated replicas are still becoming available" }
end
-- v0.8 moved status.canary.stableRS to status.stableRS
local stableRS, hash, strategy = st.stableRS, str(st.currentPodHash), tbl(sp.strategy)
if stableRS == nil then
  stableRS = c.stableRS
end
stableRS = str(stableRS)
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
]])(st, sp)
  end
end
return { status = "Progressing", message = "Waiting for rollout spec update to be observed" }
