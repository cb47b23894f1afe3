hs = {}
if obj.status.phase == "Ready" then
  hs.status = "Healthy"
elseif string.find(obj.status.phase, "Err") then
  hs.status = "Degraded"
else
  hs.status = "Pending"
end
return hs
