"""Train the tiny CLIP model that ships in kgrag/assets/tiny_clip.

No CLIP weights can be downloaded on the machines this project is built on, so the project trains
its own: an open_clip custom model (about 8M parameters) on procedurally drawn coloured shapes
(:mod:`kgrag.demo.shapes`) and their captions ("a red circle"). It takes about four minutes on two
CPU cores and then classifies new drawings zero-shot, which is enough to test cross-modal retrieval
with a real, trained CLIP model.

Usage::

    .venv/bin/python scripts/train_tiny_clip.py                 # writes kgrag/assets/tiny_clip
    .venv/bin/python scripts/train_tiny_clip.py --out /tmp/x --steps 5   # a smoke run

The output folder gets ``kgrag-tiny-clip.json`` (the open_clip model config; its file name is the
model name), ``open_clip_model.safetensors`` (fp16 state dict) and ``training.json`` (what was run
and what it measured). The held-out accuracy is measured after reloading the saved file through
``open_clip.create_model_and_transforms``, so it is the accuracy of what ships.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kgrag.demo.shapes import COLOURS, SHAPES, caption, draw_shape  # noqa: E402

MODEL_NAME = "kgrag-tiny-clip"
CHECKPOINT = "open_clip_model.safetensors"
MODEL_CONFIG: dict[str, Any] = {
    "embed_dim": 64,
    "vision_cfg": {"image_size": 64, "patch_size": 8, "layers": 4, "width": 128},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 128, "heads": 4, "layers": 4},
}
CLASSES = [(c, s) for c in COLOURS for s in SHAPES]

log = logging.getLogger("train_tiny_clip")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, default=REPO / "kgrag" / "assets" / "tiny_clip")
    p.add_argument("--steps", type=int, default=560, help="optimizer steps (default 560)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=40, help="linear warm-up steps, then cosine")
    p.add_argument("--pool-per-class", type=int, default=400, help="training drawings per class")
    p.add_argument("--eval-per-class", type=int, default=25, help="held-out drawings per class")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--eval-seed", type=int, default=98765, help="seed of the held-out drawings")
    p.add_argument("--threads", type=int, default=2, help="torch threads (1 or 2 here)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    log.setLevel(logging.INFO)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))

    import open_clip
    import torch
    import torch.nn.functional as F
    from safetensors.torch import save_file

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True, warn_only=True)

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / f"{MODEL_NAME}.json"
    config_path.write_text(json.dumps(MODEL_CONFIG, indent=2) + "\n", encoding="utf-8")
    open_clip.add_model_config(config_path)

    model, _, preprocess = open_clip.create_model_and_transforms(MODEL_NAME)
    tokenizer = open_clip.get_tokenizer(MODEL_NAME)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model %s: %.2fM parameters", MODEL_NAME, n_params / 1e6)

    def drawings(per_class: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        rng = random.Random(seed)
        images, labels = [], []
        for _ in range(per_class):
            for label, (colour, shape) in enumerate(CLASSES):
                images.append(preprocess(draw_shape(colour, shape, rng)))
                labels.append(label)
        return torch.stack(images), torch.tensor(labels)

    t0 = time.perf_counter()
    train_x, train_y = drawings(args.pool_per_class, args.seed)
    eval_x, eval_y = drawings(args.eval_per_class, args.eval_seed)
    log.info(
        "drew %d training and %d held-out drawings in %.1f s",
        len(train_y),
        len(eval_y),
        time.perf_counter() - t0,
    )
    captions = [caption(c, s) for c, s in CLASSES]
    text_tokens = tokenizer(captions)

    decay: list[torch.nn.Parameter] = []
    no_decay: list[torch.nn.Parameter] = []
    for name, param in model.named_parameters():
        small = param.ndim < 2 or "ln" in name or "bias" in name or "logit_scale" in name
        (no_decay if small else decay).append(param)
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": args.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=args.lr,
        betas=(0.9, 0.98),
        eps=1e-6,
    )

    def lr_at(step: int) -> float:
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * 0.5 * (1 + math.cos(math.pi * progress))

    generator = torch.Generator().manual_seed(args.seed)
    model.train()
    t_train = time.perf_counter()
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        idx = torch.randint(len(train_y), (args.batch_size,), generator=generator)
        images, labels = train_x[idx], train_y[idx]
        img = F.normalize(model.encode_image(images), dim=-1)
        txt = F.normalize(model.encode_text(text_tokens), dim=-1)
        logits = model.logit_scale.exp() * img @ txt.T  # (batch, classes)
        # Image -> caption: one right caption per drawing. Caption -> image: every drawing of
        # the caption's class in the batch is a positive (captions repeat within a batch).
        loss_img = F.cross_entropy(logits, labels)
        log_p = logits.T.log_softmax(dim=-1)  # (classes, batch)
        positives = F.one_hot(labels, len(CLASSES)).T.float()
        present = positives.sum(dim=-1) > 0
        loss_txt = -((log_p * positives).sum(-1)[present] / positives.sum(-1)[present]).mean()
        loss = (loss_img + loss_txt) / 2
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        if step % 50 == 0 or step == args.steps - 1:
            acc = (logits.argmax(-1) == labels).float().mean().item()
            log.info(
                "step %4d  loss %.4f  batch acc %.3f  lr %.2e  %.0f s",
                step,
                loss.item(),
                acc,
                lr_at(step),
                time.perf_counter() - t_train,
            )
    train_seconds = time.perf_counter() - t_train

    state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()}
    checkpoint = out / CHECKPOINT
    save_file(state, str(checkpoint), metadata={"format": "pt", "model": MODEL_NAME})
    log.info("wrote %s (%.1f MB)", checkpoint, checkpoint.stat().st_size / 1e6)

    # Measure what ships: reload the saved fp16 file through open_clip itself.
    reloaded, _, _ = open_clip.create_model_and_transforms(MODEL_NAME, pretrained=str(checkpoint))
    reloaded.eval()
    with torch.inference_mode():
        txt = F.normalize(reloaded.encode_text(text_tokens), dim=-1)
        img = torch.cat([F.normalize(reloaded.encode_image(b), dim=-1) for b in eval_x.split(256)])
    sims = img @ txt.T
    zero_shot = (sims.argmax(-1) == eval_y).float().mean().item()
    retrieval = (eval_y[sims.argmax(0)] == torch.arange(len(CLASSES))).float().mean().item()
    log.info(
        "held-out zero-shot accuracy %.4f on %d drawings; text->image top-1 %.4f",
        zero_shot,
        len(eval_y),
        retrieval,
    )

    report = {
        "model": MODEL_NAME,
        "parameters": n_params,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "weight_decay": args.weight_decay,
        "seed": args.seed,
        "eval_seed": args.eval_seed,
        "threads": args.threads,
        "train_seconds": round(train_seconds, 1),
        "held_out_drawings": len(eval_y),
        "zero_shot_accuracy": round(zero_shot, 4),
        "text_to_image_top1": round(retrieval, 4),
        "checkpoint_bytes": checkpoint.stat().st_size,
        "torch": torch.__version__,
        "open_clip": open_clip.__version__,
    }
    (out / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
