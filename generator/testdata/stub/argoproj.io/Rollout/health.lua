-- Stub Rollout health for the format goldens (generator/golden_test.go), not the real script.
-- Text YAML would have to quote: "double", 'single', key: value, # hash, [list], {map}, | and >.
-- analysis-health:options
local inconclusiveStatus = "Suspended"
local humanGate = "Suspended"
-- analysis-health:end-options
if type(obj.status) == "table" and obj.status.phase == "Paused" then
  if humanGate == "Healthy" then
    return {status = "Healthy", message = "waiting for a person; analysis passed (stub)"}
  end
  return {status = "Suspended", message = "stub Rollout: paused"}
end
if type(obj.status) == "table" and obj.status.phase == "Inconclusive" then
  return {status = inconclusiveStatus, message = "stub Rollout: inconclusive"}
end
return {status = "Healthy", message = "stub Rollout"}
