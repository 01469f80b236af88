"""Reinforcement-learning environments for the games: PettingZoo AEC and a Gymnasium single seat.

An optional extra (``pip install 'sixnimmt-arena[rl]'``): numpy, gymnasium and pettingzoo, which
the base install (the SDK) never imports. See docs/envs.md.
"""
