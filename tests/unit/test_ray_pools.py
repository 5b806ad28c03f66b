"""How a Ray job's model pools share the cluster (kgrag.ingest.ray_job.pool_plan)."""

from __future__ import annotations

from kgrag.ingest.ray_job import pool_plan

STAGES = ("transcribe", "embed_text", "embed_images")


def test_on_two_cpus_every_pool_and_the_chunk_tasks_fit_side_by_side() -> None:
    plan = pool_plan({"CPU": 2.0}, STAGES, batches=5)
    assert plan.gpus == 0
    # three model pools of at least one actor each, plus chunk tasks, within 2 CPUs
    assert plan.cpus * (len(STAGES) + 1) <= 2.0
    assert plan.actors == {"transcribe": 2, "embed_text": 2, "embed_images": 2}


def test_a_cluster_with_gpus_gives_each_model_actor_a_gpu_and_a_whole_cpu() -> None:
    plan = pool_plan({"CPU": 64.0, "GPU": 8.0}, STAGES, batches=100)
    assert plan.gpus == 1 and plan.cpus == 1.0
    assert set(plan.actors.values()) == {8}  # one actor per GPU in each pool


def test_pools_never_outnumber_the_batches_and_follow_an_explicit_size() -> None:
    assert pool_plan({"CPU": 16.0}, ["embed_text"], batches=3).actors == {"embed_text": 3}
    assert pool_plan({"CPU": 16.0}, ["embed_text"], batches=30, actors=4).actors == {
        "embed_text": 4
    }
