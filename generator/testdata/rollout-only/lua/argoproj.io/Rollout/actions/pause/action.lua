-- analysis-health: pause a Rollout, as Argo CD v3.2's built-in pause action does (spec.paused = true; the
-- controller adds the pause condition). Argo CD v2.14 has no such action. See docs/actions.md.
if type(obj.spec) ~= "table" then
  error("pause: the Rollout has no spec", 0)
end
obj.spec.paused = true
return obj
