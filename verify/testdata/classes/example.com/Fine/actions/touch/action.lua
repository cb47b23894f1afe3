if type(obj.spec) ~= "table" then
  error("no spec", 0)
end
obj.spec.touched = obj.spec.mode .. "!"
return obj
