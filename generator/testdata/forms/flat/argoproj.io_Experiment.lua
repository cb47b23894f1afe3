-- analysis-health argoproj.io/Experiment health, one chunk for Argo CD v3.6 (compiles the script once and caches it); source: lua/argoproj.io/Experiment/health.lua
-- analysis-health: argoproj.io/Experiment health that names the analysis behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Cost: Argo CD v2 parses and compiles the whole script on every evaluation, which in gopher-lua costs
-- per token (ten times what the lexer spends on a token's worth of text inside a long string) and per
-- function. So the parsed code only tells the states apart and answers those that need no list of
-- analyses; the list of those a running experiment waits for, and the verdicts, sit in long strings
-- compiled only for the objects that reach them (inlined for Argo CD v3.6+, which caches the compiled
-- script). Semantics, with upstream citations:
-- docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local st = obj.status
if type(st) ~= "table" then
  return { status = "Progressing", message = "Waiting for experiment to finish: status has not been reconciled." }
end
-- A phase compares equal to a string only if it is that string, so the tests here need no conversion; a
-- phase that is not a string goes to the rules below, which read it as text. A Successful experiment is
-- Healthy whatever its analyses say: the controller decided.
local phase = st.phase
if phase == "Successful" then
  return { status = "Healthy", message = "Experiment is successful" }
end

-- status.analysisRuns[] is the experiment controller's copy of each AnalysisRun's phase and message: bad
-- when one Failed or Errored; waiting, perhaps, when one has no verdict (the list below is exact).
local runs, bad, waiting = type(st.analysisRuns) == "table" and st.analysisRuns or {}, false, false
for _, r in ipairs(runs) do
  local p = type(r) == "table" and r.phase
  bad = bad or p == "Failed" or p == "Error"
  waiting = waiting or p ~= false and p ~= "Successful" and p ~= "Inconclusive"
end

if not bad and phase == "Running" and not waiting then
  return { status = "Progressing", message = "Experiment is running" }
elseif not bad and phase == "Running" then
  -- The analyses it waits for ("", Pending, Running), compiled only for the experiments that have some.
  return (function(runs)
-- A string, number or boolean as text; anything else (nil, a table: all a JSON value can be besides) as "".
local function s(v)
  return v ~= nil and type(v) ~= "table" and tostring(v) or ""
end
local waiting, sep = "", ": waiting for "
for _, r in ipairs(runs) do
  local p = type(r) == "table" and s(r.phase)
  if p == "" or p == "Pending" or p == "Running" then
    waiting = waiting .. sep .. "analysis " .. s(r.name) .. (s(r.analysisRun) ~= "" and " (AnalysisRun " .. s(r.analysisRun) .. ")" or "")
      .. " " .. (p ~= "" and p or "Pending") .. (s(r.message) ~= "" and ": " .. s(r.message) or "")
    sep = "; "
  end
end
return { status = "Progressing", message = "Experiment is running" .. waiting }
end)(runs)
elseif not bad and (phase == "Pending" or phase == "" or phase == nil) then
  return { status = "Progressing", message = "Experiment is pending" }
end

-- A verdict, an analysis failed before the experiment ended, or a phase this script does not know: rules
-- compiled only for the objects that reach them.
return (function(st, runs, inconclusiveStatus)
local function s(v)
  return v ~= nil and type(v) ~= "table" and tostring(v) or ""
end
local phase = s(st.phase)
-- The analyses that Failed or Errored, and those Inconclusive.
local bad, inconclusive = "", ""
for _, r in ipairs(runs) do
  if type(r) == "table" then
    local p = s(r.phase)
    local text = "analysis " .. s(r.name) .. (s(r.analysisRun) ~= "" and " (AnalysisRun " .. s(r.analysisRun) .. ")" or "")
      .. " " .. p .. (s(r.message) ~= "" and ": " .. s(r.message) or "")
    if p == "Failed" or p == "Error" then
      bad = (bad == "" and "" or bad .. "; ") .. text
    elseif p == "Inconclusive" then
      inconclusive = (inconclusive == "" and "" or inconclusive .. "; ") .. text
    end
  end
end
if phase == "Failed" or phase == "Error" or phase == "Inconclusive" then
  -- The analyses behind the verdict, else the controller's message.
  local runs = phase == "Inconclusive" and inconclusive or bad
  runs = runs ~= "" and runs or s(st.message)
  local base = phase == "Failed" and "Experiment has failed" or phase == "Error" and "Experiment had an error"
    or "Experiment was inconclusive"
  return { status = phase == "Inconclusive" and inconclusiveStatus or "Degraded", message = runs == "" and base or base .. ": " .. runs }
elseif bad ~= "" then
  -- the experiment controller ends the experiment on the next reconcile; the verdict is already known
  return { status = "Degraded", message = "Experiment analysis failed: " .. bad }
elseif phase == "" then
  -- a phase that is not a string
  return { status = "Progressing", message = "Experiment is pending" }
end
return { status = "Progressing", message = "Experiment phase " .. phase .. " is not recognised" }
end)(st, runs, inconclusiveStatus)
