if type(obj.spec) == "table" and obj.spec.mode == "a" then
  return obj
end
return obj.metadata.name
