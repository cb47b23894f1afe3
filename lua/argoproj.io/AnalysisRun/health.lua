-- analysis-health: argoproj.io/AnalysisRun health that names the metric behind the verdict.
-- Runs in Argo CD's argocd-cm sandbox: base, table and package only (no string, math or os), so every
-- value read from the object is type-checked before use and messages are built with `..` and tostring.
-- Cost: Argo CD v2 parses and compiles the whole script on every evaluation, which in gopher-lua costs
-- per token (a quarter of a microsecond each, ten times what the lexer spends on a token's worth of text
-- inside a long string) and per function (as much as thirty tokens). So the parsed code is only the common
-- paths, a Successful run and a run still measuring with no metric failed, in as few tokens as they can
-- be said; every other state compiles the rest of the rules from a long string, only for the objects that
-- reach them. The generator inlines it for Argo CD v3.6+, which caches the compiled script. Semantics,
-- with upstream citations: docs/health-semantics.md.

-- analysis-health:options
local inconclusiveStatus = "Suspended"
-- analysis-health:end-options

local st = obj.status
if type(st) ~= "table" then
  return { status = "Progressing", message = "Waiting for analysis run to finish: status has not been reconciled." }
end

-- A string, number or boolean as text; anything else (nil, a table: all a JSON value can be besides) as "".
local function s(v)
  return v ~= nil and type(v) ~= "table" and tostring(v) or ""
end

-- progress: each counted metric's measurements, against the count its spec asks for (wanted, by name).
-- progress starts with the ": " that joins it to the message, when there is any.
local spec, phase, rare, progress, sep, wanted = type(obj.spec) == "table" and obj.spec or {}, s(st.phase), false, "", ": ", {}
local results = type(st.metricResults) == "table" and st.metricResults or {}
-- A Successful run shows no progress: the two tests spare Argo CD v3.6 building it.
for _, m in ipairs(phase ~= "Successful" and type(spec.metrics) == "table" and spec.metrics or {}) do
  if type(m) == "table" and s(m.name) ~= "" then
    wanted[s(m.name)] = s(m.count)
  end
end
-- rare: a metric that decides the run (Failed, Error), or a dry-run metric to mention (Failed, Error,
-- Inconclusive); the rules in the long string handle those. Dry-run metrics never decide the run's phase
-- (analysis/analysis.go assessRunStatus), so they are not counted.
for _, r in ipairs(results) do
  if type(r) == "table" then
    local name, p = s(r.name), s(r.phase)
    rare = rare or p == "Failed" or p == "Error" or p == "Inconclusive" and r.dryRun == true
    if r.dryRun ~= true and phase ~= "Successful" then
      progress = progress .. sep .. name .. " " .. (tonumber(r.count) or 0)
        .. ((wanted[name] or "") ~= "" and "/" .. wanted[name] or "") .. " measurements"
        .. (p ~= "" and p ~= "Running" and " (" .. p .. ")" or "")
      sep = ", "
    end
  end
end

if not rare and phase == "Successful" then
  return { status = "Healthy", message = s(st.message) ~= "" and s(st.message)
      or spec.terminate == true and "Analysis run terminated; every metric was within its limits"
      or "Analysis run completed successfully" }
end
-- No verdict yet.
if not rare and (phase == "Running" or phase == "Pending" or phase == "") then
  return { status = "Progressing", message = (phase == "" and "Analysis run is pending" or "Analysis run is running")
      .. progress }
end

-- A verdict, a metric that decides a run still running, dry-run metrics to mention, or a phase this
-- script does not know: the rest of the rules, compiled only for the objects that reach them.
return loadstring([==[
local st, spec, results, progress, s, inconclusiveStatus = ...
local phase, message = s(st.phase), s(st.message)

-- The dry-run metrics that Failed, Errored or were Inconclusive, to mention: dry-run metrics never decide
-- the run's phase (analysis/analysis.go assessRunStatus). And whether a counted metric already Failed or
-- Errored, which decides the run: the controller terminates it and the worst metric phase becomes the
-- run's (utils/analysis/helpers.go analysisStatusOrder).
local dryRun, decided = "", false
for _, r in ipairs(results) do
  if type(r) == "table" then
    local p = s(r.phase)
    if r.dryRun ~= true then
      decided = decided or p == "Failed" or p == "Error"
    elseif p == "Failed" or p == "Error" or p == "Inconclusive" then
      dryRun = (dryRun == "" and "" or dryRun .. ", ") .. "metric \"" .. s(r.name) .. "\" " .. p
    end
  end
end
dryRun = dryRun ~= "" and "; dry-run " .. dryRun .. " (not counted)" or ""

-- only: the phase of the counted metrics the message is about, true for Failed and Error; rebuild: the
-- assessment has to be rebuilt, as the controller wrote none.
local status, only, rebuild
if phase == "Failed" or phase == "Error" or phase == "Inconclusive" then
  status = phase == "Inconclusive" and inconclusiveStatus or "Degraded"
  only, rebuild = phase, message == ""
elseif phase == "Successful" then
  status = "Healthy"
  message = message ~= "" and message or spec.terminate == true and "Analysis run terminated; every metric was within its limits"
    or "Analysis run completed successfully"
elseif decided and (phase == "" or phase == "Pending" or phase == "Running") then
  status, only, rebuild = "Degraded", true, true
else
  -- No verdict yet.
  status = "Progressing"
  message = (phase == "Running" or phase == "Pending") and "Analysis run is running"
    or phase == "" and "Analysis run is pending" or "Analysis run phase " .. phase .. " is not recognised"
  message = message .. progress
end

-- A verdict: why, from the metrics' last measurements and the conditions of the run's spec; and, for
-- controllers or runs that left status.message empty, the same text the controller writes there
-- (analysis/analysis.go assessMetricStatus). Compiled only for runs with a verdict.
if only then
  local out, why = loadstring([=[
local spec, results, s, only, rebuild = ...
local specs, out, whys, names = {}, "", {}, {}
for _, m in ipairs(type(spec.metrics) == "table" and spec.metrics or {}) do
  if type(m) == "table" and s(m.name) ~= "" then
    specs[s(m.name)] = m
  end
end
-- A text read from the object, or its length when it is too long for a message: the sandbox has no
-- string.sub to cut it.
local function clip(v)
  return #v <= 120 and v or "(" .. #v .. " bytes)"
end
for _, r in ipairs(results) do
  local p = type(r) == "table" and r.dryRun ~= true and s(r.phase)
  if p == only or only == true and (p == "Failed" or p == "Error") then
    local m = specs[s(r.name)] or {}
    if rebuild then
      -- The counter behind the phase, its limit (IntOrString: what the spec says, else the controller's
      -- default, utils/defaults) and how the controller names them.
      local shown, counter, field, limit = "failed", "failed", "failureLimit", "0"
      if p == "Error" then
        shown, counter, field, limit = "consecutiveErrors", "consecutiveError", "consecutiveErrorLimit", "4"
      elseif p == "Inconclusive" then
        shown, counter, field, limit = "inconclusive", "inconclusive", "inconclusiveLimit", "0"
      end
      limit = s(m[field]) ~= "" and s(m[field]) or limit
      -- The "due to" clause is claimed only when the counter really exceeds the limit; a verdict that came
      -- from consecutiveSuccessLimit says so instead.
      local n, ln = tonumber(r[counter]) or 0, tonumber(limit)
      out = (out == "" and "" or out .. "; ") .. "Metric \"" .. s(r.name) .. "\" assessed " .. p
        .. ((ln == nil or ln >= 0 and n > ln) and " due to " .. shown .. " (" .. n .. ") > " .. field .. " (" .. limit .. ")"
          or s(m.consecutiveSuccessLimit) ~= "" and " due to consecutiveSuccess (" .. (tonumber(r.consecutiveSuccess) or 0)
            .. ") < consecutiveSuccessLimit (" .. s(m.consecutiveSuccessLimit) .. ")" or "")
        .. (s(r.message) ~= "" and ": \"Error Message: " .. s(r.message) .. "\"" or "")
    end
    -- Why: the metric's last measurement, when it has the verdict's phase (the one that took the counter
    -- past its limit: a metric is assessed after each measurement and measures no more once decided),
    -- and what decided it. The job provider's is the Job it ran (metricproviders/job Metadata["job-name"],
    -- v1.8.5 and v1.10.2), whose phase is the Job's whatever conditions the spec has. Any other's phase
    -- follows from the spec's conditions (utils/evaluate EvaluateResult): Failed is the failureCondition
    -- held or, without one, the successCondition did not; Inconclusive with both is neither held. Its
    -- value is shown only with the condition it was held to: without one, a provider's value means what
    -- the provider makes it mean. An Error's why is the provider's error, which the assessment quotes.
    local ms = type(r.measurements) == "table" and r.measurements or {}
    local x = type(ms[#ms]) == "table" and s(ms[#ms].phase) == p and ms[#ms] or {}
    local job, v, sc, fc, w = type(x.metadata) == "table" and s(x.metadata["job-name"]) or "", s(x.value),
      s(m.successCondition), s(m.failureCondition), false
    if job ~= "" then
      w = "last Job \"" .. clip(job) .. "\" " .. (p == "Failed" and "failed" or p == "Error" and "errored" or "inconclusive")
    elseif v ~= "" and p == "Failed" and (fc ~= "" or sc ~= "") then
      w = "last value " .. clip(v) .. (fc ~= "" and " met failureCondition \"" .. clip(fc) .. "\""
        or " missed successCondition \"" .. clip(sc) .. "\"")
    elseif v ~= "" and p == "Inconclusive" and sc ~= "" and fc ~= "" then
      w = "last value " .. clip(v) .. " met neither successCondition \"" .. clip(sc) .. "\" nor failureCondition \"" .. clip(fc) .. "\""
    end
    -- A rebuilt assessment is followed by its metric's why; the controller's names one metric, so the
    -- whys follow it, each named when there are several.
    if w and rebuild then
      out = out .. "; " .. w
    elseif w then
      whys[#whys + 1], names[#whys + 1] = w, s(r.name)
    end
  end
end
local why = ""
for i = 1, #whys > 3 and 3 or #whys do
  why = why .. "; " .. (#whys > 1 and "metric \"" .. names[i] .. "\" " or "") .. whys[i]
end
return out, why .. (#whys > 3 and "; " .. (#whys - 3) .. " more metrics " .. only or "")
]=])(spec, results, s, only, rebuild)
  if only == true then
    message = out .. " (run terminating)"
  elseif rebuild then
    message = out ~= "" and out or phase == "Failed" and "Analysis run failed"
      or phase == "Error" and "Analysis run had an error" or "Analysis run was inconclusive"
  end
  message = message .. why
end
-- Every message is non-empty here.
return { status = status, message = message .. dryRun }
]==])(st, spec, results, progress, s, inconclusiveStatus)
