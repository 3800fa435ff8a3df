#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a synthetic allocation log of GPT-2 training, in the logging adaptor's CSV format.

The log follows what PyTorch allocates when it trains a GPT-2 model (nanoGPT layout, fp32, plain
attention, AdamW with foreach kernels, gradients set to None after each step) with the memory
manager underneath it and no caching allocator in between:

- the main thread allocates the batch, runs the forward pass, the optimizer step and
  zero_grad (which frees every parameter gradient);
- the autograd thread runs the backward pass: it frees the activations the forward pass saved,
  allocates and frees the activation gradients, and allocates the parameter gradients;
- the sequence length changes from step to step (dynamic padding), so the activations differ in
  size every step: layer norm statistics of a few KiB up to attention scores and logits of
  hundreds of MiB. One step halfway through has the longest sequence, so that is where the peak
  comes, after the earlier steps have left their mark on the memory.

Every allocation is on the default stream (0x0). Pointers are synthetic and never reused. The
output is deterministic for a given set of arguments; a name ending in .gz is gzip-compressed.

    scripts/gpt2-training-log.py gpt2.csv.gz                  # about 7 GiB peak live
    scripts/gpt2-training-log.py small.csv --layers 2 --steps 4 --batch 1 --max-seq 256
"""

import argparse
import gzip
import random
import sys

FLOAT = 4
INDEX = 8


class Log:
    def __init__(self, main_thread, autograd_thread):
        self.main = main_thread
        self.autograd = autograd_thread
        self.rows = []
        self.next_pointer = 0x7F0000000000
        self.microseconds = 8_000_000
        self.live = 0
        self.peak_live = 0
        self.rng = random.Random(1)

    def _row(self, thread, action, pointer, size):
        self.microseconds += self.rng.randint(2, 40)
        us = self.microseconds
        time = f"{us // 3_600_000_000:02d}:{us // 60_000_000 % 60:02d}:{us // 1_000_000 % 60:02d}.{us % 1_000_000:06d}"
        self.rows.append(f"{thread},{time},{action},{pointer:#x},{size},0x0")

    def allocate(self, thread, size):
        pointer = self.next_pointer
        self.next_pointer += (size + 511) // 512 * 512
        self._row(thread, "allocate", pointer, size)
        self.live += size
        self.peak_live = max(self.peak_live, self.live)
        return (pointer, size)

    def free(self, thread, tensor):
        pointer, size = tensor
        self._row(thread, "free", pointer, size)
        self.live -= size


class Gpt2:
    """Parameter tensors of GPT-2 (weights tied between the token embedding and the head)."""

    def __init__(self, layers, width, vocabulary, context):
        self.layers = layers
        self.width = width
        self.vocabulary = vocabulary
        self.context = context
        c = width
        self.parameters = {"wte": vocabulary * c, "wpe": context * c}
        for layer in range(layers):
            for name, count in (("ln1.w", c), ("ln1.b", c), ("attn.w", c * 3 * c), ("attn.b", 3 * c),
                                ("proj.w", c * c), ("proj.b", c), ("ln2.w", c), ("ln2.b", c),
                                ("fc.w", c * 4 * c), ("fc.b", 4 * c), ("fc_proj.w", 4 * c * c),
                                ("fc_proj.b", c)):
                self.parameters[f"h{layer}.{name}"] = count
        self.parameters["ln_f.w"] = c
        self.parameters["ln_f.b"] = c


class Trainer:
    def __init__(self, log, model, batch, heads):
        self.log = log
        self.model = model
        self.batch = batch
        self.heads = heads
        self.weights = {name: log.allocate(log.main, count * FLOAT) for name, count in model.parameters.items()}
        self.grads = {}
        self.adam_state = {}
        self.batch_tensors = []

    # Parameter gradients: the first gradient of a step becomes .grad (allocated on the autograd
    # thread); a second one (the tied embedding) is added into it and freed.
    def parameter_gradient(self, name):
        log = self.log
        grad = log.allocate(log.autograd, self.model.parameters[name] * FLOAT)
        if name in self.grads:
            log.free(log.autograd, grad)
        else:
            self.grads[name] = grad

    def step(self, seq):
        log, main, bw = self.log, self.log.main, self.log.autograd
        b, t, c, h, v = self.batch, seq, self.model.width, self.heads, self.model.vocabulary
        btc, bt4c, bhtt, btv, bt = b * t * c * FLOAT, b * t * 4 * c * FLOAT, b * h * t * t * FLOAT, b * t * v * FLOAT, b * t * FLOAT

        # The next batch replaces the previous one (freed once the Python names are rebound).
        new_batch = [log.allocate(main, b * t * INDEX), log.allocate(main, b * t * INDEX)]
        for tensor in self.batch_tensors:
            log.free(main, tensor)
        self.batch_tensors = new_batch

        # ---- forward (main thread) ----
        tok = log.allocate(main, btc)
        pos = log.allocate(main, t * c * FLOAT)
        x = log.allocate(main, btc)
        log.free(main, tok)
        log.free(main, pos)
        saved_layers = []
        for _ in range(self.model.layers):
            s = {"x": x}
            s["h1"], s["m1"], s["r1"] = log.allocate(main, btc), log.allocate(main, bt), log.allocate(main, bt)
            qkv = log.allocate(main, 3 * btc)
            s["q"], s["k"], s["v"] = log.allocate(main, btc), log.allocate(main, btc), log.allocate(main, btc)
            log.free(main, qkv)
            scores = log.allocate(main, bhtt)
            scaled = log.allocate(main, bhtt)
            log.free(main, scores)
            masked = log.allocate(main, bhtt)
            log.free(main, scaled)
            s["att"] = log.allocate(main, bhtt)
            log.free(main, masked)
            y = log.allocate(main, btc)
            s["y"] = log.allocate(main, btc)
            log.free(main, y)
            proj = log.allocate(main, btc)
            s["x2"] = log.allocate(main, btc)
            log.free(main, proj)
            s["h2"], s["m2"], s["r2"] = log.allocate(main, btc), log.allocate(main, bt), log.allocate(main, bt)
            s["fc"] = log.allocate(main, bt4c)
            s["gelu"] = log.allocate(main, bt4c)
            fc_proj = log.allocate(main, btc)
            x = log.allocate(main, btc)
            log.free(main, fc_proj)
            saved_layers.append(s)
        hf, mf, rf = log.allocate(main, btc), log.allocate(main, bt), log.allocate(main, bt)
        logits = log.allocate(main, btv)
        log_softmax = log.allocate(main, btv)
        log.free(main, logits)
        loss, total_weight = log.allocate(main, FLOAT), log.allocate(main, FLOAT)
        seed = log.allocate(main, FLOAT)  # loss.backward(): the gradient of the loss

        # ---- backward (autograd thread) ----
        d_log_softmax = log.allocate(bw, btv)
        log.free(bw, seed)
        log.free(bw, total_weight)
        d_logits = log.allocate(bw, btv)
        log.free(bw, d_log_softmax)
        log.free(bw, log_softmax)
        d_hf = log.allocate(bw, btc)
        self.parameter_gradient("wte")
        log.free(bw, d_logits)
        log.free(bw, hf)
        dx = log.allocate(bw, btc)
        self.parameter_gradient("ln_f.w")
        self.parameter_gradient("ln_f.b")
        for tensor in (d_hf, mf, rf, x):
            log.free(bw, tensor)
        for layer in reversed(range(self.model.layers)):
            s = saved_layers[layer]
            p = f"h{layer}."
            d_gelu = log.allocate(bw, bt4c)
            self.parameter_gradient(p + "fc_proj.w")
            self.parameter_gradient(p + "fc_proj.b")
            log.free(bw, s["gelu"])
            d_fc = log.allocate(bw, bt4c)
            log.free(bw, d_gelu)
            log.free(bw, s["fc"])
            d_h2 = log.allocate(bw, btc)
            self.parameter_gradient(p + "fc.w")
            self.parameter_gradient(p + "fc.b")
            log.free(bw, d_fc)
            log.free(bw, s["h2"])
            d_x2_ln = log.allocate(bw, btc)
            self.parameter_gradient(p + "ln2.w")
            self.parameter_gradient(p + "ln2.b")
            for tensor in (d_h2, s["m2"], s["r2"], s["x2"]):
                log.free(bw, tensor)
            dx2 = log.allocate(bw, btc)
            log.free(bw, dx)
            log.free(bw, d_x2_ln)
            d_y = log.allocate(bw, btc)
            self.parameter_gradient(p + "proj.w")
            self.parameter_gradient(p + "proj.b")
            log.free(bw, s["y"])
            d_y_heads = log.allocate(bw, btc)
            log.free(bw, d_y)
            d_att = log.allocate(bw, bhtt)
            d_v = log.allocate(bw, btc)
            log.free(bw, d_y_heads)
            d_masked = log.allocate(bw, bhtt)
            log.free(bw, d_att)
            log.free(bw, s["att"])
            d_scaled = log.allocate(bw, bhtt)
            log.free(bw, d_masked)
            d_scores = log.allocate(bw, bhtt)
            log.free(bw, d_scaled)
            d_q, d_k = log.allocate(bw, btc), log.allocate(bw, btc)
            log.free(bw, d_scores)
            for tensor in (s["q"], s["k"], s["v"]):
                log.free(bw, tensor)
            d_qkv = log.allocate(bw, 3 * btc)
            for tensor in (d_q, d_k, d_v):
                log.free(bw, tensor)
            d_h1 = log.allocate(bw, btc)
            self.parameter_gradient(p + "attn.w")
            self.parameter_gradient(p + "attn.b")
            log.free(bw, d_qkv)
            log.free(bw, s["h1"])
            d_x_ln = log.allocate(bw, btc)
            self.parameter_gradient(p + "ln1.w")
            self.parameter_gradient(p + "ln1.b")
            for tensor in (d_h1, s["m1"], s["r1"], s["x"]):
                log.free(bw, tensor)
            dx = log.allocate(bw, btc)
            log.free(bw, dx2)
            log.free(bw, d_x_ln)
        d_pos = log.allocate(bw, t * c * FLOAT)
        self.parameter_gradient("wpe")
        log.free(bw, d_pos)
        self.parameter_gradient("wte")  # the embedding's gradient, added to the head's
        log.free(bw, dx)

        # ---- gradient clipping, AdamW, zero_grad (main thread) ----
        log.free(main, loss)
        norms = [log.allocate(main, FLOAT) for _ in self.grads]
        stacked = log.allocate(main, len(norms) * FLOAT)
        for tensor in norms:
            log.free(main, tensor)
        total = log.allocate(main, FLOAT)
        log.free(main, stacked)
        coefficient = log.allocate(main, FLOAT)
        log.free(main, total)
        log.free(main, coefficient)
        if not self.adam_state:
            for name, count in self.model.parameters.items():
                self.adam_state[name] = (log.allocate(main, count * FLOAT), log.allocate(main, count * FLOAT))
        denominators = [log.allocate(main, count * FLOAT) for count in self.model.parameters.values()]
        for tensor in denominators:
            log.free(main, tensor)
        for name in self.model.parameters:
            log.free(main, self.grads.pop(name))

    def finish(self):
        log = self.log
        for tensor in self.batch_tensors:
            log.free(log.main, tensor)
        for first, second in self.adam_state.values():
            log.free(log.main, first)
            log.free(log.main, second)
        for tensor in self.weights.values():
            log.free(log.main, tensor)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="the log to write (.csv or .csv.gz); - for stdout")
    parser.add_argument("--steps", type=int, default=24, help="training steps (default 24)")
    parser.add_argument("--batch", type=int, default=4, help="sequences per batch (default 4)")
    parser.add_argument("--min-seq", type=int, default=128, help="shortest sequence (default 128)")
    parser.add_argument("--max-seq", type=int, default=896, help="longest sequence (default 896)")
    parser.add_argument("--layers", type=int, default=12, help="transformer blocks (default 12)")
    parser.add_argument("--width", type=int, default=768, help="embedding width (default 768)")
    parser.add_argument("--heads", type=int, default=12, help="attention heads (default 12)")
    parser.add_argument("--vocabulary", type=int, default=50257, help="vocabulary size (default 50257)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sequence lengths (default 0)")
    args = parser.parse_args()
    if not 1 <= args.min_seq <= args.max_seq:
        parser.error("need 1 <= --min-seq <= --max-seq")

    log = Log(main_thread=4242, autograd_thread=4263)
    model = Gpt2(args.layers, args.width, args.vocabulary, context=max(args.max_seq, 1024))
    trainer = Trainer(log, model, args.batch, args.heads)
    lengths = random.Random(args.seed)
    for step in range(args.steps):
        # One step halfway through has the longest sequence, so the peak is known and comes when
        # the earlier steps have left their mark on the memory.
        seq = args.max_seq if step == args.steps // 2 else lengths.randint(args.min_seq, args.max_seq)
        trainer.step(seq)
    trainer.finish()

    text = "Thread,Time,Action,Pointer,Size,Stream\n" + "\n".join(log.rows) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    elif args.output.endswith(".gz"):
        with gzip.GzipFile(args.output, "wb", mtime=0) as out:
            out.write(text.encode())
    else:
        with open(args.output, "w") as out:
            out.write(text)
    print(f"{args.output}: {len(log.rows)} events, {args.steps} steps, peak live {log.peak_live / 2**30:.2f} GiB",
          file=sys.stderr)


if __name__ == "__main__":
    main()
