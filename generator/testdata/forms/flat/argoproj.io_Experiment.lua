-- analysis-health argoproj.io/Experiment health, one chunk for Argo CD v3.6 (compiles the script once and caches it); source: lua/argoproj.io/Experiment/health.lua
-- analysis-health: argoproj.io/Experiment health that names the analysis behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local st = obj.status
if type(st) ~= "table" then
  return { status = "Progressing", message = "Waiting for experiment to finish: status has not been reconciled." }
end

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

-- status.analysisRuns[] is the experiment controller's copy of each AnalysisRun's phase and message.
local function analyses(phases)
  local out = {}
  for _, r in ipairs(type(st.analysisRuns) == "table" and st.analysisRuns or {}) do
    if type(r) == "table" and phases[str(r.phase)] then
      local text = "analysis " .. str(r.name)
      if str(r.analysisRun) ~= "" then
        text = text .. " (AnalysisRun " .. str(r.analysisRun) .. ")"
      end
      text = text .. " " .. (str(r.phase) ~= "" and str(r.phase) or "Pending")
      if str(r.message) ~= "" then
        text = text .. ": " .. str(r.message)
      end
      table.insert(out, text)
    end
  end
  return table.concat(out, "; ")
end

local function with(base, detail)
  if detail == "" and str(st.message) ~= "" then
    detail = str(st.message)
  end
  if detail == "" then
    return base
  end
  return base .. ": " .. detail
end

local phase = str(st.phase)
local failing = { Failed = true, Error = true }
if phase == "Failed" then
  return { status = "Degraded", message = with("Experiment has failed", analyses(failing)) }
elseif phase == "Error" then
  return { status = "Degraded", message = with("Experiment had an error", analyses(failing)) }
elseif phase == "Inconclusive" then
  return { status = inconclusiveStatus, message = with("Experiment was inconclusive", analyses({ Inconclusive = true })) }
elseif phase == "Successful" then
  return { status = "Healthy", message = "Experiment is successful" }
elseif analyses(failing) ~= "" then
  -- the experiment controller ends the experiment on the next reconcile; the verdict is already known
  return { status = "Degraded", message = "Experiment analysis failed: " .. analyses(failing) }
elseif phase == "Running" then
  local running = analyses({ [""] = true, Pending = true, Running = true })
  if running == "" then
    return { status = "Progressing", message = "Experiment is running" }
  end
  return { status = "Progressing", message = "Experiment is running: waiting for " .. running }
elseif phase == "Pending" or phase == "" then
  return { status = "Progressing", message = "Experiment is pending" }
end
return { status = "Progressing", message = "Experiment phase " .. phase .. " is not recognised" }
