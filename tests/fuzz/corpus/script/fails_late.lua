return function(w)
  for e in w:each() do
    e.Health.hp = e.Health.hp - 1
    e.Position = {x = 9, y = 9}
    w:spawn{AI = {}}
  end
  error("after the writes")
end
