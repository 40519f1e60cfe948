return function(w)
  for e in w:each() do
    e.Health.hp = 0/0
    e.Mana = {points = "lots", tags = {1, 2, {}}}
    e.Name = {name = "hero"}
  end
end
