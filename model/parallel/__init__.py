"""Model parallelism on one CPU: the Decoder split across processes that talk through
torch.distributed's gloo backend over loopback (model/parallel/launch.py starts them).

- stages.py: the Decoder cut into pipeline stages, GPipe and 1F1B with send/recv;
- tensor.py: its MLP split column-then-row and its attention split by heads;
- ring.py: ring attention, keys and values passed around the processes;
- comm.py: the bytes each kind of parallelism sends, counted from the shapes.
"""
