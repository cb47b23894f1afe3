-- analysis-health: skip the current canary step, as Argo CD v3.2's built-in skip-current-step action does:
-- advance status.currentStepIndex by one and drop the pause conditions, unless the rollout is on its last
-- step or is not a canary with steps. Argo CD v2.14 has no such action. Where v3.2's script fails on a
-- missing field, this one names the field. See docs/actions.md.
local function tbl(v)
  if type(v) == "table" then
    return v
  end
  return nil
end

local status = tbl(obj.status)
if status == nil then
  return obj
end
local strategy = tbl(tbl(obj.spec) and obj.spec.strategy)
local canary = tbl(strategy and strategy.canary)
local steps = tbl(canary and canary.steps)
if steps == nil then
  return obj
end
if type(status.currentStepIndex) ~= "number" then
  error("skip-current-step: status.currentStepIndex is not a number; the controller has not started the canary steps", 0)
end
if status.currentStepIndex < table.getn(steps) then
  local pauseConditions = tbl(status.pauseConditions)
  if pauseConditions ~= nil and table.getn(pauseConditions) > 0 then
    status.pauseConditions = nil
  end
  status.currentStepIndex = status.currentStepIndex + 1
end
return obj
