"""balancenet: data-parallel training on heterogeneous clusters.

PyTorch users keep their own script and add a few lines (docs/python.md):

    import balancenet.torch as bn
    bn.init()
    model = torch.nn.parallel.DistributedDataParallel(model)
    bn.attach(model)
    loader = bn.DataLoader(dataset, global_batch=256)
    for x, y in loader:
        ...; optimizer.step(); bn.step_done(loss)

and start it with `balancenet launch --workers 4 train.py`.
"""
