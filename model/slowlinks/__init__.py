"""Training over slow links: W data-parallel workers that send less than a full gradient.

- compress.py: top-k with and without error feedback, DeMo's chunked DCT, the bytes each sends;
- sim.py: W workers of many runs in one process (the Decoder stacked), each method's step;
- real.py: the same methods in W real processes (gloo, loopback), for the equivalence check;
- queueing.py: workers waiting for the slowest, and a shared link as an M/D/1 queue.
"""
