local ok = pcall(function() return os.execute("true") end)
local s = string.rep("a", 50)
return function(w)
  local t = {}
  for k, v in pairs({b = 1, a = 2, 3}) do t[#t + 1] = tostring(k) .. v end
  string.find(s, "(a*)*b")
  io.open("/etc/passwd")
  load("\27Lua")
end
