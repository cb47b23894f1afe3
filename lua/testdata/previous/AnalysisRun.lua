-- analysis-health: argoproj.io/AnalysisRun health that names the metric behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Argo CD v2 parses the script on every evaluation, which costs per token: the parsed path is a terse
-- version of the rules for a Successful run and a run still measuring with no metric failed; every other
-- state gets the rest of the rules, from a long string compiled only for the objects that reach it. The
-- generator inlines it for Argo CD v3.6+, which caches the compiled script.
-- Semantics, with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local st = obj.status
if type(st) ~= "table" then
  return { status = "Progressing", message = "Waiting for analysis run to finish: status has not been reconciled." }
end

-- A string, number or boolean as text; anything else as "".
local function s(v)
  local t = type(v)
  return (t == "string" or t == "number" or t == "boolean") and tostring(v) or ""
end

-- rare: a metric that decides the run (Failed, Error) or a dry-run metric to mention; the rules below
-- handle those.
local spec = type(obj.spec) == "table" and obj.spec or {}
local phase, message, results, rare = s(st.phase), s(st.message), {}, false
for _, r in ipairs(type(st.metricResults) == "table" and st.metricResults or {}) do
  if type(r) == "table" and r.dryRun ~= true then
    table.insert(results, r)
    rare = rare or r.phase == "Failed" or r.phase == "Error"
  elseif type(r) == "table" then
    local p = s(r.phase)
    rare = rare or p == "Failed" or p == "Error" or p == "Inconclusive"
  end
end
-- Per-metric progress: each metric's measurements, against the count its spec asks for.
local function progress()
  local wanted, out = {}, {}
  for _, m in ipairs(type(spec.metrics) == "table" and spec.metrics or {}) do
    if type(m) == "table" and s(m.name) ~= "" then
      wanted[s(m.name)] = s(m.count)
    end
  end
  for _, r in ipairs(results) do
    local name, p = s(r.name), s(r.phase)
    table.insert(out, name .. " " .. (tonumber(r.count) or 0) .. ((wanted[name] or "") ~= "" and "/" .. wanted[name] or "")
      .. " measurements" .. ((p ~= "" and p ~= "Running") and " (" .. p .. ")" or ""))
  end
  return table.concat(out, ", ")
end

if not rare and phase == "Successful" then
  return { status = "Healthy", message = message ~= "" and message
      or spec.terminate == true and "Analysis run terminated; every metric was within its limits"
      or "Analysis run completed successfully" }
end
-- No verdict yet.
if not rare and (phase == "Running" or phase == "Pending" or phase == "") then
  message = phase == "" and "Analysis run is pending" or "Analysis run is running"
  return { status = "Progressing", message = #results > 0 and message .. ": " .. progress() or message }
end

-- A verdict, a metric that decides a run still running, dry-run metrics to mention, or a phase this
-- script does not know: rules compiled only for the objects that reach them.
return loadstring([==[
local st, spec, phase, message, results, s, progress, inconclusiveStatus = ...

-- Dry-run metrics never decide the run's phase (analysis/analysis.go assessRunStatus): mention those that
-- failed.
local dryRun = {}
for _, r in ipairs(type(st.metricResults) == "table" and st.metricResults or {}) do
  local p = type(r) == "table" and r.dryRun == true and s(r.phase)
  if p == "Failed" or p == "Error" or p == "Inconclusive" then
    table.insert(dryRun, "metric \"" .. s(r.name) .. "\" " .. p)
  end
end
local function withDryRun(m)
  if #dryRun == 0 then
    return m
  end
  local note = "dry-run " .. table.concat(dryRun, ", ") .. " (not counted)"
  if m == "" then
    return note
  end
  return m .. "; " .. note
end

-- The same text the controller writes into status.message (analysis/analysis.go assessMetricStatus),
-- rebuilt for controllers or runs that left it empty.
local specs = {}
for _, m in ipairs(type(spec.metrics) == "table" and spec.metrics or {}) do
  if type(m) == "table" and s(m.name) ~= "" then
    specs[s(m.name)] = m
  end
end
local function num(v)
  return tonumber(v) or 0
end
-- Limits are IntOrString; show what the spec says, else the controller's default (utils/defaults).
local function limit(metric, field, default)
  local v = s((specs[metric] or {})[field])
  if v == "" then
    return tostring(default)
  end
  return v
end
-- The "due to" clause is claimed only when the counter really exceeds the limit; a verdict that came
-- from consecutiveSuccessLimit says so instead.
local clauses = {
  Failed = { "failed", "failed", "failureLimit", 0 },
  Error = { "consecutiveErrors", "consecutiveError", "consecutiveErrorLimit", 4 },
  Inconclusive = { "inconclusive", "inconclusive", "inconclusiveLimit", 0 },
}
local function assess(r)
  local name, p = s(r.name), s(r.phase)
  local text, clause = "Metric \"" .. name .. "\" assessed " .. p, ""
  local c = clauses[p]
  if c ~= nil then
    local l = limit(name, c[3], c[4])
    local n, ln = num(r[c[2]]), tonumber(l)
    if ln == nil or (ln >= 0 and n > ln) then
      clause = c[1] .. " (" .. n .. ") > " .. c[3] .. " (" .. l .. ")"
    end
  end
  local successLimit = s((specs[name] or {}).consecutiveSuccessLimit)
  if clause == "" and successLimit ~= "" then
    clause = "consecutiveSuccess (" .. num(r.consecutiveSuccess) .. ") < consecutiveSuccessLimit (" .. successLimit .. ")"
  end
  if clause ~= "" then
    text = text .. " due to " .. clause
  end
  if s(r.message) ~= "" then
    text = text .. ": \"Error Message: " .. s(r.message) .. "\""
  end
  return text
end
local function matching(phases)
  local out = {}
  for _, r in ipairs(results) do
    if phases[s(r.phase)] then
      table.insert(out, assess(r))
    end
  end
  return table.concat(out, "; ")
end

local verdicts = {
  Failed = { "Degraded", "Analysis run failed" },
  Error = { "Degraded", "Analysis run had an error" },
  Inconclusive = { inconclusiveStatus, "Analysis run was inconclusive" },
}
local v = verdicts[phase]
if v ~= nil then
  if message == "" then
    message = matching({ [phase] = true })
  end
  if message == "" then
    message = v[2]
  end
  return { status = v[1], message = withDryRun(message) }
end
if phase == "Successful" then
  if message == "" and spec.terminate == true then
    message = "Analysis run terminated; every metric was within its limits"
  elseif message == "" then
    message = "Analysis run completed successfully"
  end
  return { status = "Healthy", message = withDryRun(message) }
end

-- A metric that already Failed or Errored decides the run: the controller terminates the run and the
-- worst metric phase becomes the run's (utils/analysis/helpers.go analysisStatusOrder).
local decided = false
for _, r in ipairs(results) do
  decided = decided or r.phase == "Failed" or r.phase == "Error"
end
if decided and (phase == "" or phase == "Pending" or phase == "Running") then
  return { status = "Degraded", message = withDryRun(matching({ Failed = true, Error = true }) .. " (run terminating)") }
end

-- "", Pending, Running, or a phase this script does not know: no verdict yet.
if phase == "Running" or phase == "Pending" then
  message = "Analysis run is running"
elseif phase == "" then
  message = "Analysis run is pending"
else
  message = "Analysis run phase " .. phase .. " is not recognised"
end
if #results > 0 then
  message = message .. ": " .. progress()
end
return { status = "Progressing", message = withDryRun(message) }
]==])(st, spec, phase, message, results, s, progress, inconclusiveStatus)
