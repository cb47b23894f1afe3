-- analysis-health: argoproj.io/AnalysisRun health that names the metric behind the verdict.
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

local function num(v)
  local n = tonumber(v)
  if n == nil then
    return 0
  end
  return n
end

local function count(v)
  if type(v) ~= "table" then
    return 0
  end
  return #v
end

local function join(parts, sep)
  if count(parts) == 0 then
    return ""
  end
  return table.concat(parts, sep)
end

local hs = {}
local status = tbl(obj.status)
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for analysis run to finish: status has not been reconciled."
  return hs
end

local spec = tbl(obj.spec) or {}
local metricSpecs = {}
for _, metric in ipairs(tbl(spec.metrics) or {}) do
  if tbl(metric) ~= nil and str(metric.name) ~= "" then
    metricSpecs[str(metric.name)] = metric
  end
end

-- Limits are IntOrString in the API; show what the spec says, else the controller's default
-- (failureLimit 0, inconclusiveLimit 0, consecutiveErrorLimit 4: argo-rollouts utils/defaults).
local function limit(metric, field, default)
  local value = str((tbl(metric) or {})[field])
  if value == "" then
    return tostring(default)
  end
  return value
end

-- The same text the controller writes into status.message (analysis/analysis.go assessMetricStatus),
-- rebuilt for controllers or runs that left the message empty. The "due to" clause is only claimed when the
-- counter really exceeds the limit; a verdict that came from consecutiveSuccessLimit says so instead.
local function exceeded(counter, limitText)
  local l = tonumber(limitText)
  return l == nil or (l >= 0 and counter > l)
end

local function assessment(result)
  local name = str(result.name)
  local phase = str(result.phase)
  local metric = metricSpecs[name]
  local text = "Metric \"" .. name .. "\" assessed " .. phase
  local clause = ""
  if phase == "Failed" then
    local l = limit(metric, "failureLimit", 0)
    if exceeded(num(result.failed), l) then
      clause = "failed (" .. num(result.failed) .. ") > failureLimit (" .. l .. ")"
    end
  elseif phase == "Error" then
    local l = limit(metric, "consecutiveErrorLimit", 4)
    if exceeded(num(result.consecutiveError), l) then
      clause = "consecutiveErrors (" .. num(result.consecutiveError) .. ") > consecutiveErrorLimit (" .. l .. ")"
    end
  elseif phase == "Inconclusive" then
    local l = limit(metric, "inconclusiveLimit", 0)
    if exceeded(num(result.inconclusive), l) then
      clause = "inconclusive (" .. num(result.inconclusive) .. ") > inconclusiveLimit (" .. l .. ")"
    end
  end
  local successLimit = str((tbl(metric) or {}).consecutiveSuccessLimit)
  if clause == "" and successLimit ~= "" then
    clause = "consecutiveSuccess (" .. num(result.consecutiveSuccess) .. ") < consecutiveSuccessLimit (" .. successLimit .. ")"
  end
  if clause ~= "" then
    text = text .. " due to " .. clause
  end
  local message = str(result.message)
  if message ~= "" then
    text = text .. ": \"Error Message: " .. message .. "\""
  end
  return text
end

local results = {}
local dryRunVerdicts = {}
for _, result in ipairs(tbl(status.metricResults) or {}) do
  result = tbl(result)
  if result ~= nil then
    local phase = str(result.phase)
    if result.dryRun == true then
      if phase == "Failed" or phase == "Error" or phase == "Inconclusive" then
        table.insert(dryRunVerdicts, "metric \"" .. str(result.name) .. "\" " .. phase)
      end
    else
      table.insert(results, result)
    end
  end
end

-- Dry-run metrics never decide the run's phase (analysis/analysis.go assessRunStatus); say they failed.
local function withDryRun(message)
  if count(dryRunVerdicts) == 0 then
    return message
  end
  local note = "dry-run " .. join(dryRunVerdicts, ", ") .. " (not counted)"
  if message == "" then
    return note
  end
  return message .. "; " .. note
end

local function verdict(phase, default)
  local message = str(status.message)
  if message == "" then
    local parts = {}
    for _, result in ipairs(results) do
      if str(result.phase) == phase then
        table.insert(parts, assessment(result))
      end
    end
    message = join(parts, "; ")
  end
  if message == "" then
    message = default
  end
  return withDryRun(message)
end

local phase = str(status.phase)

if phase == "Failed" then
  hs.status = "Degraded"
  hs.message = verdict("Failed", "Analysis run failed")
  return hs
end
if phase == "Error" then
  hs.status = "Degraded"
  hs.message = verdict("Error", "Analysis run had an error")
  return hs
end
if phase == "Inconclusive" then
  hs.status = inconclusiveStatus
  hs.message = verdict("Inconclusive", "Analysis run was inconclusive")
  return hs
end
if phase == "Successful" then
  hs.status = "Healthy"
  local message = str(status.message)
  if message == "" then
    if spec.terminate == true then
      message = "Analysis run terminated; every metric was within its limits"
    else
      message = "Analysis run completed successfully"
    end
  end
  hs.message = withDryRun(message)
  return hs
end

-- A metric that already Failed or Errored decides the run: the controller terminates the run and the
-- worst metric phase becomes the run's (utils/analysis/helpers.go analysisStatusOrder).
if phase == "" or phase == "Pending" or phase == "Running" then
  local decided = {}
  for _, result in ipairs(results) do
    local resultPhase = str(result.phase)
    if resultPhase == "Failed" or resultPhase == "Error" then
      table.insert(decided, assessment(result))
    end
  end
  if count(decided) > 0 then
    hs.status = "Degraded"
    hs.message = withDryRun(join(decided, "; ") .. " (run terminating)")
    return hs
  end
end

-- "", Pending, Running, or a phase this script does not know: no verdict yet.
local progress = {}
for _, result in ipairs(results) do
  local name = str(result.name)
  local wanted = str((metricSpecs[name] or {}).count)
  local done = num(result.count)
  local text = name .. " " .. done
  if wanted ~= "" then
    text = text .. "/" .. wanted
  end
  text = text .. " measurements"
  local resultPhase = str(result.phase)
  if resultPhase ~= "" and resultPhase ~= "Running" then
    text = text .. " (" .. resultPhase .. ")"
  end
  table.insert(progress, text)
end

hs.status = "Progressing"
if phase == "Running" or phase == "Pending" then
  hs.message = "Analysis run is running"
elseif phase == "" then
  hs.message = "Analysis run is pending"
else
  hs.message = "Analysis run phase " .. phase .. " is not recognised"
end
if count(progress) > 0 then
  hs.message = hs.message .. ": " .. join(progress, ", ")
end
hs.message = withDryRun(hs.message)
return hs
