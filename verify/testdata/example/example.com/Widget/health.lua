-- Ready condition -> Healthy or Degraded; anything else is still progressing.
local hs = {status = "Progressing", message = "Waiting for the widget to become ready"}
if type(obj.status) ~= "table" or type(obj.status.conditions) ~= "table" then
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if type(c) == "table" and c.type == "Ready" then
    local msg = type(c.message) == "string" and c.message or ""
    if c.status == "True" then
      return {status = "Healthy", message = msg}
    elseif c.status == "False" then
      return {status = "Degraded", message = msg}
    end
  end
end
return hs
