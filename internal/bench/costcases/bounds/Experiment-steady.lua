-- The least a health script must run for a Successful Experiment.
local f=obj.status if type(f)=="table"and f.phase=="Successful"then return{status="Healthy",message="Experiment is successful"}end
