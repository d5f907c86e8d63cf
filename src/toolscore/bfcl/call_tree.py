"""BFCL replays shared between cases: per setup, a tree of the call sequences replayed.

toolscore makes one case per turn, and each turn's case replays the calls of all earlier
turns again, for the agent and for the ground truth; the results of one entry (a model's,
perturbed ones) also share most of their calls. So the runtime keeps, per setup (an entry's
classes and initial configuration), the tree of the call sequences it has replayed: each node
holds the text its call returned and, once taken, the snapshot there. A replay walks the tree
without running anything while its calls are known ones (a `Cursor` with no instances). Only
at its first new call does it need instances in that node's state: those parked there by the
replay that last took a snapshot there (taken over, not copied), else those parked at the
nearest node above, run forward; else new ones from the setup, run along the whole path.

This rests on what a plan's goal state already rests on: a replay is deterministic (BFCL's
classes seed their random generators), and taking a snapshot does not change the state.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

Instances = dict[str, Any]
"""The involved classes' instances of one replay, by class name."""
Execute = Callable[[Instances, str, dict[str, Any]], str]
"""Runs one call on instances and returns its result as BFCL records it."""

TREES_KEPT = 8
"""How many setups' trees a runtime keeps (the cases of an entry come together)."""


class Node:
    """A call sequence from a setup: the last call, its result, what was seen there."""

    __slots__ = ("args", "children", "name", "parent", "parked", "result", "snapshot")

    def __init__(self, parent: Node | None, name: str, args: bytes, result: str) -> None:
        self.parent = parent
        self.name = name
        self.args = args
        """The call's arguments as JSON bytes (a fresh copy is parsed to run it again)."""
        self.result = result
        self.children: dict[tuple[str, bytes], Node] = {}
        self.snapshot: dict[str, Any] | None = None
        self.parked: Instances | None = None
        """Instances in this node's state that no replay owns, free to be taken over."""


class Tree:
    """The calls replayed from one setup, and how to build that setup's instances again."""

    __slots__ = ("build", "execute", "methods", "root")

    def __init__(self, build: Callable[[], Instances], execute: Execute, methods: Any) -> None:
        self.build = build
        self.execute = execute
        self.methods = methods
        self.root = Node(None, "", b"", "")

    def instances_at(self, node: Node) -> Instances:
        """Instances in `node`'s state, owned by the caller: parked ones taken over (at the
        node, or above it and run forward), or new ones run along the whole path."""
        path: list[Node] = []
        while node.parked is None and node.parent is not None:
            path.append(node)
            node = node.parent
        instances = node.parked if node.parked is not None else self.build()
        node.parked = None
        for step in reversed(path):
            self.execute(instances, step.name, orjson.loads(step.args))
        return instances


class Cursor:
    """Where one replay is in its setup's tree, and the instances it owns (None while its
    calls are known ones). Detached (`node` None) once a call did not finish: from then on
    it runs its own instances and shares nothing."""

    __slots__ = ("instances", "node", "tree")

    def __init__(self, tree: Tree, instances: Instances | None) -> None:
        self.tree = tree
        self.node: Node | None = tree.root
        self.instances = instances

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run a call, or take its result from the tree when this sequence ran before."""
        if self.node is None:
            return self.tree.execute(self.own(), name, args)
        try:
            key = (name, orjson.dumps(args, option=orjson.OPT_SORT_KEYS))
        except TypeError:  # not JSON: run it, and leave the tree
            return self._detached_call(name, args)
        known = self.node.children.get(key)
        if known is not None:
            if self.instances is not None and self.node.parked is None:
                self.node.parked = self.instances  # left for a replay that goes another way
            self.instances = None
            self.node = known
            return known.result
        parent = self.node
        instances = self.own()
        self.node = None  # until the call has finished, these instances are in no node's state
        result = self.tree.execute(instances, name, args)
        self.node = parent.children[key] = Node(parent, name, key[1], result)
        return result

    def own(self) -> Instances:
        """This replay's instances, taken over or rebuilt when it has none."""
        if self.instances is None:
            assert self.node is not None
            self.instances = self.tree.instances_at(self.node)
        return self.instances

    def snapshot(self, take: Callable[[Instances], dict[str, Any]]) -> dict[str, Any]:
        """The snapshot of this replay's state (`take` makes one from instances): the tree's,
        when one was taken in this node's state; the instances are then parked there."""
        if self.node is None:
            return take(self.own())
        if self.node.snapshot is None:
            self.node.snapshot = take(self.own())
        if self.instances is not None and self.node.parked is None:
            self.node.parked = self.instances
            self.instances = None
        return self.node.snapshot

    def __deepcopy__(self, memo: dict[int, Any]) -> Cursor:
        """A copy for a rollback: its own copy of the instances (none while they are the
        tree's), at the same node."""
        copied = Cursor(self.tree, None)
        copied.node = self.node
        if self.instances is not None:
            copied.instances = copy.deepcopy(self.instances, memo)
        return copied

    def _detached_call(self, name: str, args: dict[str, Any]) -> str:
        instances = self.own()
        self.node = None
        return self.tree.execute(instances, name, args)


class Trees:
    """The trees of the setups replayed last, by the setup's JSON."""

    def __init__(self) -> None:
        self._trees: OrderedDict[bytes, Tree] = OrderedDict()

    def get(self, key: bytes) -> Tree | None:
        """The tree of setup `key`, now the most recently used; None when not kept."""
        tree = self._trees.get(key)
        if tree is not None:
            self._trees.move_to_end(key)
        return tree

    def add(self, key: bytes, tree: Tree) -> None:
        """Keep a new setup's tree, forgetting the least recently used beyond TREES_KEPT."""
        self._trees[key] = tree
        while len(self._trees) > TREES_KEPT:
            self._trees.popitem(last=False)
