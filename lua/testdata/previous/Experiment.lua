-- analysis-health: argoproj.io/Experiment health that names the analysis behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Argo CD v2 parses the script on every evaluation, which costs per token: the rules are written tersely,
-- and those for a verdict sit in a long string compiled only when one is reached (inlined for Argo CD v3.6+).
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local st = obj.status
if type(st) ~= "table" then
  return { status = "Progressing", message = "Waiting for experiment to finish: status has not been reconciled." }
end

-- A string, number or boolean as text; anything else as "".
local function s(v)
  local t = type(v)
  return (t == "string" or t == "number" or t == "boolean") and tostring(v) or ""
end

-- status.analysisRuns[] is the experiment controller's copy of each AnalysisRun's phase and message:
-- sorted into failed (Failed, Error), inconclusive and waiting ("", Pending, Running).
local phase, bad, inc, wait = s(st.phase), {}, {}, {}
for _, r in ipairs(type(st.analysisRuns) == "table" and st.analysisRuns or {}) do
  if type(r) == "table" then
    local p = s(r.phase)
    local into = (p == "Failed" or p == "Error") and bad or p == "Inconclusive" and inc
        or (p == "" or p == "Pending" or p == "Running") and wait
    if into then
      table.insert(into, "analysis " .. s(r.name) .. (s(r.analysisRun) ~= "" and " (AnalysisRun " .. s(r.analysisRun) .. ")" or "")
        .. " " .. (p ~= "" and p or "Pending") .. (s(r.message) ~= "" and ": " .. s(r.message) or ""))
    end
  end
end

if phase == "Successful" then
  return { status = "Healthy", message = "Experiment is successful" }
elseif #bad == 0 and phase == "Running" then
  return { status = "Progressing", message = #wait == 0 and "Experiment is running" or "Experiment is running: waiting for " .. table.concat(wait, "; ") }
elseif #bad == 0 and (phase == "Pending" or phase == "") then
  return { status = "Progressing", message = "Experiment is pending" }
end

-- A verdict, an analysis failed before the experiment ended, or a phase this script does not know: rules
-- compiled only for the objects that reach them.
return loadstring([[
local st, phase, bad, inc, s, inconclusiveStatus = ...
local function with(base, runs)
  local d = table.concat(runs, "; ")
  if d == "" then
    d = s(st.message)
  end
  return d == "" and base or base .. ": " .. d
end
if phase == "Failed" then
  return { status = "Degraded", message = with("Experiment has failed", bad) }
elseif phase == "Error" then
  return { status = "Degraded", message = with("Experiment had an error", bad) }
elseif phase == "Inconclusive" then
  return { status = inconclusiveStatus, message = with("Experiment was inconclusive", inc) }
elseif #bad > 0 then
  -- the experiment controller ends the experiment on the next reconcile; the verdict is already known
  return { status = "Degraded", message = "Experiment analysis failed: " .. table.concat(bad, "; ") }
end
return { status = "Progressing", message = "Experiment phase " .. phase .. " is not recognised" }
]])(st, phase, bad, inc, s, inconclusiveStatus)
