local hs = {}
if obj.status then
  hs.status = "Healthy"
return hs
