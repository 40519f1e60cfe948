return function(w)
  for e in w:each() do
    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)
  end
end
