def test_import():
    import polygrad
    assert polygrad.Tensor([1.0]).numpy()[0] == 1.0
