"""The workbench's objectives (docs/objectives.md; src/objectives/*.ts are the float64 references)
on a batch's logits: SFT, the PPO-clipped RL objective with GRPO advantages, and SDCC's KL added to
either. Every token term is a mean over the batch's targets (weight 1/T), as the workbench's step.
On one rank's share of a batch (select_sequences), `total_targets` and `total_pairs` give the whole
batch's T and P: the ranks' losses then sum to the whole batch's loss, and so do their gradients.
"""

from __future__ import annotations

from typing import Optional

import torch

from .batch import Batch, target_logprobs

DEFAULT_PPO_EPSILON = 0.2


def grpo_advantages(rewards: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """(R,) A_i = (r_i - mean_g) / std_g over rollout i's group (population std, no epsilon); 0 for a
    rollout without a group (group -1) and in a group whose rewards are all equal."""
    rewards = rewards.to(torch.float64)
    if not bool(torch.isfinite(rewards[groups >= 0]).all()):
        raise ValueError("grpo_advantages: every grouped rollout needs a finite reward")
    advantages = torch.zeros_like(rewards)
    for g in torch.unique(groups[groups >= 0]).tolist():
        members = groups == g
        values = rewards[members]
        if bool((values == values[0]).all()):
            continue
        mean = values.mean()
        std = ((values - mean) ** 2).mean().sqrt()
        advantages[members] = (values - mean) / std
    return advantages


def target_advantages(batch: Batch) -> torch.Tensor:
    """(T,) each target's GRPO advantage, from the rollouts' rewards and groups in the batch (a missing reward counts 0, as in the workbench)."""
    rewards = torch.nan_to_num(batch.rollout_rewards.to(torch.float64), nan=0.0)
    return grpo_advantages(rewards, batch.rollout_groups)[batch.rollout_index[batch.target_rows]]


def token_loss(
    batch: Batch,
    logits: torch.Tensor,
    objective: str = "sft",
    *,
    advantages: Optional[torch.Tensor] = None,
    epsilon: float = DEFAULT_PPO_EPSILON,
    kl_coef: float = 0.0,
    ref_logprobs: Optional[torch.Tensor] = None,
    total_targets: Optional[int] = None,
) -> torch.Tensor:
    """SFT: mean NLL of the targets. PPO: r = exp(l - l_rollout), mean of -min(r A, clip(r, 1-eps, 1+eps) A)
    plus kl_coef * k3 with k3 = exp(l_ref - l) - (l_ref - l) - 1 (needs ref_logprobs (T,)). The sum over
    the targets is divided by `total_targets` when given (the whole batch's T), else by this batch's T."""
    logprob = target_logprobs(batch, logits)
    T = logprob.shape[0] if total_targets is None else total_targets
    if T == 0:
        raise ValueError(f"{batch.method}: the batch scores no target")
    if objective == "sft":
        return -logprob.sum() / T
    if objective != "ppo":
        raise ValueError(f"unknown objective {objective!r} (sft, ppo, sdcc)")
    rollout = batch.target_rollout_logprobs.to(logprob.dtype)
    if bool(torch.isnan(rollout).any()):
        raise ValueError("ppo needs every target's rollout logprob; this batch has targets without one")
    A = (target_advantages(batch) if advantages is None else advantages).to(logprob.dtype)
    ratio = torch.exp(logprob - rollout)
    loss = -torch.minimum(ratio * A, torch.clamp(ratio, 1 - epsilon, 1 + epsilon) * A)
    if kl_coef != 0:
        if ref_logprobs is None:
            raise ValueError("ppo with kl_coef needs ref_logprobs: the reference model's logprob of every target")
        d = ref_logprobs.to(logprob.dtype).clamp(max=0) - logprob
        loss = loss + kl_coef * (torch.exp(d) - d - 1)
    return loss.sum() / T


def sdcc_kl(batch: Batch, logits: torch.Tensor, total_pairs: Optional[int] = None) -> torch.Tensor:
    """Mean over the batch's diverging leaves of KL(teacher || student) over the full vocabulary, the
    teacher (its row in the same forward) under stop-gradient; exactly 0 without diverging leaves.
    The sum over the pairs is divided by `total_pairs` when given (the whole batch's P)."""
    student, teacher = batch.sdcc_student_rows, batch.sdcc_teacher_rows
    if student.shape[0] == 0:
        return logits.sum() * 0
    ls = torch.log_softmax(logits[student], dim=-1)
    lt = torch.log_softmax(logits[teacher].detach(), dim=-1)
    P = student.shape[0] if total_pairs is None else total_pairs
    return (lt.exp() * (lt - ls)).sum(-1).sum() / P


def packed_loss(
    batch: Batch,
    logits: torch.Tensor,
    objective: str = "sft",
    *,
    task: str = "sft",
    lam: float = 0.1,
    advantages: Optional[torch.Tensor] = None,
    epsilon: float = DEFAULT_PPO_EPSILON,
    kl_coef: float = 0.0,
    ref_logprobs: Optional[torch.Tensor] = None,
    total_targets: Optional[int] = None,
    total_pairs: Optional[int] = None,
) -> torch.Tensor:
    """The objective on logits (N, V) of the whole batch: "sft", "ppo", or "sdcc" (an sdcc batch:
    L = L_task + lam * mean KL, task "sft" or "ppo" on the student's targets). On a rank's share,
    total_targets and total_pairs are the whole batch's counts (the means stay the whole batch's)."""
    options = dict(advantages=advantages, epsilon=epsilon, kl_coef=kl_coef, ref_logprobs=ref_logprobs, total_targets=total_targets)
    if objective != "sdcc":
        return token_loss(batch, logits, objective, **options)
    if batch.method != "sdcc":
        raise ValueError(f"objective sdcc needs a batch exported with --method sdcc, this one is {batch.method}")
    return token_loss(batch, logits, task, **options) + lam * sdcc_kl(batch, logits, total_pairs)
