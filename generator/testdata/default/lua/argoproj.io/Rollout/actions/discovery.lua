-- analysis-health: argoproj.io/Rollout action discovery. Emitted with mergeBuiltinActions: true, so Argo CD
-- runs this script first and its own built-in discovery after it; on a duplicate name the first entry wins.
-- It lists pause and skip-current-step (Argo CD v3.2 built-ins, missing from v2.14) and, while an analysis
-- run of the current revision has Failed or Errored, returns promote-full and skip-current-step disabled so
-- nobody clicks past the verdict: a failed analysis is answered by retry or abort (rollback).
-- Runs without open libraries, as Argo CD runs every discovery: base, table and package only.
-- Details and upstream citations: docs/actions.md.

-- analysis-health:options
local blockBypassOnFailedAnalysis = true
-- analysis-health:end-options

local function tbl(v)
  if type(v) == "table" then
    return v
  end
  return nil
end

local function str(v)
  if type(v) == "string" then
    return v
  end
  return ""
end

local metadata = tbl(obj.metadata) or {}
local spec = tbl(obj.spec) or {}
local status = tbl(obj.status)
local st = status or {}
local strategy = tbl(spec.strategy) or {}

local actions = {}

-- pause, as Argo CD v3.2's built-in discovery decides it: nothing to pause once the current pods are the
-- stable ones, after an abort, or when already paused. Without a status (Argo CD's script fails there)
-- the current and stable hashes are both unknown, which reads as fully promoted.
local fullyPromoted = st.currentPodHash == st.stableRS
actions["pause"] = { ["disabled"] = fullyPromoted or st.abort == true or spec.paused == true }

-- skip-current-step, as v3.2's built-in: only for a canary with steps that is not on its last step. Argo
-- CD's script fails without a status and offers the action when currentStepIndex is unset, although its
-- action then fails; here both cases leave it disabled.
local canary = tbl(strategy.canary)
local steps = nil
if canary ~= nil then
  steps = tbl(canary.steps)
end
local skipDisabled = steps == nil or status == nil or type(st.currentStepIndex) ~= "number"
  or st.currentStepIndex == table.getn(steps)
actions["skip-current-step"] = { ["disabled"] = skipDisabled }

if not blockBypassOnFailedAnalysis then
  return actions
end

-- The status describes the current spec only once the controller has observed its generation; before
-- that, a Failed entry may belong to the revision being replaced, so nothing is blocked.
local observed = tonumber(st.observedGeneration)
if observed == nil or observed ~= tonumber(metadata.generation) then
  return actions
end

-- The four places where the controller copies the current AnalysisRun's verdict, in the order the health
-- script reports them. Blue-green keeps its entries after a forced full promotion; once that revision is
-- stable and Healthy the Failed entry records an overridden verdict, as the health script treats it.
local canaryStatus = tbl(st.canary) or {}
local blueGreenStatus = tbl(st.blueGreen) or {}
local promoted = str(st.phase) == "Healthy" and str(st.stableRS) ~= "" and str(st.stableRS) == str(st.currentPodHash)
local runs = {
  { label = "step analysis", entry = canaryStatus.currentStepAnalysisRunStatus, blueGreen = false },
  { label = "background analysis", entry = canaryStatus.currentBackgroundAnalysisRunStatus, blueGreen = false },
  { label = "pre-promotion analysis", entry = blueGreenStatus.prePromotionAnalysisRunStatus, blueGreen = true },
  { label = "post-promotion analysis", entry = blueGreenStatus.postPromotionAnalysisRunStatus, blueGreen = true },
}

local blocked = nil
for _, run in ipairs(runs) do
  local entry = tbl(run.entry)
  if entry ~= nil and blocked == nil and not (run.blueGreen and promoted) then
    local phase = str(entry.status)
    if phase == "Failed" or phase == "Error" then
      blocked = run.label .. " run"
      if str(entry.name) ~= "" then
        blocked = blocked .. " " .. str(entry.name)
      end
      blocked = blocked .. " " .. phase
    end
  end
end

if blocked == nil then
  return actions
end

-- displayName is what Argo CD's UI shows in the actions menu, so the reason travels with the entry.
actions["promote-full"] = { ["disabled"] = true, ["displayName"] = "promote-full (blocked: " .. blocked .. ")" }
if not skipDisabled then
  actions["skip-current-step"] = { ["disabled"] = true, ["displayName"] = "skip-current-step (blocked: " .. blocked .. ")" }
end
return actions
