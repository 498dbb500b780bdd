"""The placement advisor behind `fabricsim place` and `fabricsim.place(...)`: fabrics, scoring and the search."""
