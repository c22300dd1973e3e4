j
locationext_good.b.nj
o^fset17j
length76p
ta