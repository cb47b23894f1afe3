if type(obj.metadata.annotations) ~= "table" then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["example.com/restart"] = "requested"
return obj
