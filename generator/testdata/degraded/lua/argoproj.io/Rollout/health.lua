-- analysis-health: argoproj.io/Rollout health that carries the verdict of the Rollout's AnalysisRuns.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Degraded"
-- analysis-health:end-options

local function tbl(v)
  if type(v) == "table" then
    return v
  end
  return nil
end

local function get(t, k)
  if type(t) == "table" then
    return t[k]
  end
  return nil
end

local function str(v)
  if v == nil then
    return ""
  end
  if type(v) == "string" then
    return v
  end
  if type(v) == "number" or type(v) == "boolean" then
    return tostring(v)
  end
  return ""
end

local function count(v)
  if type(v) ~= "table" then
    return 0
  end
  return #v
end

local function join(parts)
  if count(parts) == 0 then
    return ""
  end
  return table.concat(parts, "; ")
end

local hs = {}
local metadata = tbl(obj.metadata) or {}
local spec = tbl(obj.spec) or {}
local status = tbl(obj.status)

-- Generation gates, as Argo CD's built-in script: until the controller has observed the current spec,
-- every status field (phase and analysis run statuses alike) describes the previous revision.
local function generationObserved()
  if status == nil then
    return false
  end
  local observed = tonumber(status.observedGeneration)
  local generation = tonumber(metadata.generation)
  if observed == nil or generation == nil or observed > generation then
    -- pre-v0.10 controllers wrote a hash here; there is nothing to compare
    return true
  end
  return observed == generation
end

local function workloadGenerationObserved()
  local annotations = tbl(metadata.annotations)
  if spec.workloadRef == nil or annotations == nil then
    return true
  end
  local wanted = tonumber(annotations["rollout.argoproj.io/workload-generation"])
  local observed = tonumber(status.workloadObservedGeneration)
  return wanted == observed
end

if not generationObserved() or not workloadGenerationObserved() then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout spec update to be observed"
  return hs
end

local canary = tbl(status.canary)
local blueGreen = tbl(status.blueGreen)

-- The four places where the controller copies the current AnalysisRun's name, phase and message.
local runs = {}
local function addRun(label, entry)
  entry = tbl(entry)
  if entry ~= nil then
    table.insert(runs, { label = label, name = str(entry.name), status = str(entry.status), message = str(entry.message) })
  end
end
addRun("Step analysis", get(canary, "currentStepAnalysisRunStatus"))
addRun("Background analysis", get(canary, "currentBackgroundAnalysisRunStatus"))
addRun("Pre-promotion analysis", get(blueGreen, "prePromotionAnalysisRunStatus"))
addRun("Post-promotion analysis", get(blueGreen, "postPromotionAnalysisRunStatus"))

local function describe(run)
  local text = run.label .. " run"
  if run.name ~= "" then
    text = text .. " " .. run.name
  end
  if run.status == "" then
    text = text .. " Pending"
  else
    text = text .. " " .. run.status
  end
  if run.message ~= "" then
    text = text .. ": " .. run.message
  end
  return text
end

-- Blue-green keeps its pre/post-promotion statuses until the next revision, even after a forced full
-- promotion: once the revision is stable and the controller calls it Healthy, a Failed entry records a
-- verdict someone overrode, not one still pending (rollout/analysis.go keeps BlueGreen runs once stable).
local promoted = str(status.phase) == "Healthy" and str(status.stableRS) ~= "" and str(status.stableRS) == str(status.currentPodHash)
local overridden = {}

local failed, inFlight, inconclusive = {}, {}, {}
for _, run in ipairs(runs) do
  local blueGreenRun = run.label == "Pre-promotion analysis" or run.label == "Post-promotion analysis"
  if (run.status == "Failed" or run.status == "Error") and promoted and blueGreenRun then
    table.insert(overridden, describe(run))
  elseif run.status == "Failed" or run.status == "Error" then
    table.insert(failed, describe(run))
  elseif run.status == "Inconclusive" then
    table.insert(inconclusive, describe(run))
  elseif run.status ~= "Successful" then
    -- "", Pending, Running, and anything a newer controller may add: not a verdict yet
    table.insert(inFlight, describe(run))
  end
end

local phase = str(status.phase)
local phaseMessage = str(status.message)
local pauseReasons = {}
for _, condition in ipairs(tbl(status.pauseConditions) or {}) do
  local reason = str(get(condition, "reason"))
  if reason ~= "" then
    pauseReasons[reason] = true
  end
end
local inconclusivePause = pauseReasons["InconclusiveAnalysisRun"] or pauseReasons["InconclusiveExperiment"]

local function inconclusiveMessage()
  if count(inconclusive) > 0 then
    return join(inconclusive)
  end
  if pauseReasons["InconclusiveExperiment"] then
    return "Experiment analysis was inconclusive: rollout paused (InconclusiveExperiment)"
  end
  return "Analysis was inconclusive: rollout paused (InconclusiveAnalysisRun)"
end

if count(failed) > 0 then
  hs.status = "Degraded"
  hs.message = join(failed)
  return hs
end

if inconclusiveStatus == "Degraded" and (count(inconclusive) > 0 or inconclusivePause) then
  hs.status = "Degraded"
  hs.message = inconclusiveMessage()
  return hs
end

if phase == "Degraded" then
  hs.status = "Degraded"
  hs.message = phaseMessage
  return hs
end

local experiment = str(get(canary, "currentExperiment"))
if experiment ~= "" then
  table.insert(inFlight, "Experiment " .. experiment .. " is running")
end

-- An inconclusive verdict pauses the rollout until someone promotes, retries or aborts it; runs still
-- measuring meanwhile (a background run without count) do not make it progress, so they are only listed.
if count(inconclusive) > 0 or inconclusivePause then
  hs.status = inconclusiveStatus
  hs.message = inconclusiveMessage()
  if count(inFlight) > 0 then
    hs.message = hs.message .. "; " .. join(inFlight)
  end
  return hs
end

if count(inFlight) > 0 then
  hs.status = "Progressing"
  hs.message = join(inFlight)
  return hs
end

-- Argo Rollouts v1.0+ records phase and message; surface them as Argo CD's built-in script does.
if phase == "Paused" then
  hs.status = "Suspended"
  hs.message = phaseMessage
  return hs
end
if phase == "Healthy" or phase == "Progressing" then
  hs.status = phase
  hs.message = phaseMessage
  if count(overridden) > 0 then
    hs.message = "Promoted despite " .. join(overridden)
  end
  return hs
end
if phase ~= "" then
  hs.status = "Progressing"
  hs.message = "Unrecognised rollout phase " .. phase .. ": " .. phaseMessage
  return hs
end

-- Controllers older than v1.0 write no phase: Argo CD's built-in legacy logic.
for _, condition in ipairs(tbl(status.conditions) or {}) do
  local ctype = str(get(condition, "type"))
  local reason = str(get(condition, "reason"))
  if ctype == "InvalidSpec" or (ctype == "Progressing" and (reason == "RolloutAborted" or reason == "ProgressDeadlineExceeded")) then
    hs.status = "Degraded"
    hs.message = str(get(condition, "message"))
    return hs
  end
end

if count(status.pauseConditions) > 0 or spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Rollout is paused"
  return hs
end

if status.currentPodHash == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: status has not been reconciled."
  return hs
end

local function number(v, default)
  local n = tonumber(v)
  if n == nil then
    return default
  end
  return n
end

local desiredReplicas = number(spec.replicas, 1)
local statusReplicas = number(status.replicas, 0)
local updatedReplicas = number(status.updatedReplicas, 0)
local availableReplicas = number(status.availableReplicas, 0)
if updatedReplicas < desiredReplicas then
  hs.status = "Progressing"
  hs.message = "Waiting for roll out to finish: More replicas need to be updated"
  return hs
end
if availableReplicas < updatedReplicas then
  hs.status = "Progressing"
  hs.message = "Waiting for roll out to finish: updated replicas are still becoming available"
  return hs
end

-- v0.8 moved status.canary.stableRS to status.stableRS
local stableRS = status.stableRS
if stableRS == nil then
  stableRS = get(canary, "stableRS")
end
stableRS = str(stableRS)
local currentPodHash = str(status.currentPodHash)
local strategy = tbl(spec.strategy) or {}

if strategy.blueGreen ~= nil then
  if blueGreen == nil or str(blueGreen.activeSelector) ~= currentPodHash then
    hs.status = "Progressing"
    hs.message = "active service cutover pending"
    return hs
  end
  if stableRS ~= "" and stableRS ~= currentPodHash then
    hs.status = "Progressing"
    hs.message = "waiting for analysis to complete"
    return hs
  end
elseif strategy.canary ~= nil then
  if statusReplicas > updatedReplicas then
    hs.status = "Progressing"
    hs.message = "Waiting for roll out to finish: old replicas are pending termination"
    return hs
  end
  if stableRS == "" or stableRS ~= currentPodHash then
    hs.status = "Progressing"
    hs.message = "Waiting for rollout to finish steps"
    return hs
  end
end

hs.status = "Healthy"
hs.message = ""
return hs
