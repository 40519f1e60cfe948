return function(w, caster, target, amount)
  local n = 0
  for e in w:each("Position") do
    n = n + 1
    if e.Mana then e.Mana.points = e.Mana.points + w:random(3) end
    if e.Health and e.Health.hp > 40 then e.Frozen = {} end
    if e.Velocity then e.Velocity.x = -e.Velocity.x end
  end
  local id = w:spawn{Position = {x = w.dt, y = w.tick}, Health = {hp = 5}}
  local g = w:get(id)
  for _, near in ipairs(w:near(1, 1, 3)) do
    local h = w:get(near)
    if h and h.Health then h.Health = nil end
  end
  w:cast(w:near(0, 0, 0.1)[1], "freeze", nil, 2)
  w:despawn(w:near(5, 1, 0.1)[1])
  return n
end
