-- analysis-health: argoproj.io/Experiment health that names the analysis behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local function tbl(v)
  if type(v) == "table" then
    return v
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

local hs = {}
local status = tbl(obj.status)
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for experiment to finish: status has not been reconciled."
  return hs
end

-- status.analysisRuns[] is the experiment controller's copy of each AnalysisRun's phase and message.
local function analyses(wanted)
  local parts = {}
  for _, run in ipairs(tbl(status.analysisRuns) or {}) do
    run = tbl(run)
    if run ~= nil then
      local phase = str(run.phase)
      local match = false
      for _, w in ipairs(wanted) do
        if phase == w then
          match = true
        end
      end
      if match then
        local text = "analysis " .. str(run.name)
        if str(run.analysisRun) ~= "" then
          text = text .. " (AnalysisRun " .. str(run.analysisRun) .. ")"
        end
        if phase == "" then
          phase = "Pending"
        end
        text = text .. " " .. phase
        if str(run.message) ~= "" then
          text = text .. ": " .. str(run.message)
        end
        table.insert(parts, text)
      end
    end
  end
  if count(parts) == 0 then
    return ""
  end
  return table.concat(parts, "; ")
end

local function with(base, detail)
  if detail == "" then
    local message = str(status.message)
    if message ~= "" then
      return base .. ": " .. message
    end
    return base
  end
  return base .. ": " .. detail
end

local phase = str(status.phase)
if phase == "Failed" then
  hs.status = "Degraded"
  hs.message = with("Experiment has failed", analyses({ "Failed", "Error" }))
elseif phase == "Error" then
  hs.status = "Degraded"
  hs.message = with("Experiment had an error", analyses({ "Error", "Failed" }))
elseif phase == "Inconclusive" then
  hs.status = inconclusiveStatus
  hs.message = with("Experiment was inconclusive", analyses({ "Inconclusive" }))
elseif phase == "Successful" then
  hs.status = "Healthy"
  hs.message = "Experiment is successful"
elseif analyses({ "Failed", "Error" }) ~= "" then
  -- the experiment controller ends the experiment on the next reconcile; the verdict is already known
  hs.status = "Degraded"
  hs.message = "Experiment analysis failed: " .. analyses({ "Failed", "Error" })
elseif phase == "Running" then
  hs.status = "Progressing"
  local running = analyses({ "", "Pending", "Running" })
  if running == "" then
    hs.message = "Experiment is running"
  else
    hs.message = "Experiment is running: waiting for " .. running
  end
elseif phase == "Pending" or phase == "" then
  hs.status = "Progressing"
  hs.message = "Experiment is pending"
else
  hs.status = "Progressing"
  hs.message = "Experiment phase " .. phase .. " is not recognised"
end
return hs
