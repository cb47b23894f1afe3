-- Stub Rollout discovery for the format goldens: the option lifts the block on promote-full.
-- analysis-health:options
local blockBypassOnFailedAnalysis = true
-- analysis-health:end-options
local actions = {}
actions["pause"] = {disabled = false}
if blockBypassOnFailedAnalysis and type(obj.status) == "table" and obj.status.phase == "Degraded" then
  actions["promote-full"] = {disabled = true, displayName = "promote-full (blocked: analysis failed)"}
end
return actions
