"""The API server's type checker, as far as the policies need it: each expression against each kind it can see.

`type_errors` checks a policy's expressions against the schema of a kind its policy
matches, the way the API server does to fill `status.typeChecking`: every field an
expression selects or tests with `has()` is one the schema has, every list (a literal,
a `+`, the branches of `?:`) has one element type, and every function gets the types it
takes. Types are named as the API server names them, by where they are in the schema:
the containers of `spec.containers` and of `spec.initContainers` are two types. The
schemas are `kubernetes-validate`'s for core kinds and `CRD_SCHEMAS` (written from
KubeRay's and Kubeflow's CRDs) for the rest.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, reduce
from importlib import resources
from typing import Any, cast

import lark

from tests.admission.cel import ENV, Tree


@dataclass(frozen=True)
class Type:
    """A CEL type: an object of a schema (`name` tells two apart), a list, a map, a scalar, or dyn."""

    kind: str  # object, list, map, string, int, bool, null, dyn, variables
    name: str = ""
    element: Type | None = None
    fields: Mapping[str, Type] | None = field(default=None, compare=False, hash=False)


DYN, STRING, INT, BOOL = Type("dyn"), Type("string"), Type("int"), Type("bool")


class Schemas:
    """OpenAPI definitions (`$defs`) read as CEL types, lazily: a field's type is built when it is selected."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions

    def type(self, schema: Mapping[str, Any], name: str) -> Type:
        """The type of `schema` at `name`: as the API server names them, by where they are (`Pod.spec.containers.@idx`
        and `Pod.spec.initContainers.@idx` are two types), not by definition."""
        if "$ref" in schema:
            schema = self.definitions[schema["$ref"].rpartition("/")[2]]
        kinds = schema.get("type", [])
        kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds if k != "null"]
        if "properties" in schema:
            return Type("object", name, fields=_LazyFields(self, schema["properties"], name))
        if "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
            return Type("map", name, self.type(schema["additionalProperties"], f"{name}.@elem"))
        if kinds == ["array"]:
            return Type("list", name, self.type(schema["items"], f"{name}.@idx"))
        return {"string": STRING, "integer": INT, "boolean": BOOL}.get(kinds[0] if len(kinds) == 1 else "", DYN)


class _LazyFields(Mapping[str, Type]):
    def __init__(self, schemas: Schemas, properties: Mapping[str, Any], name: str) -> None:
        self.schemas, self.properties, self.name = schemas, properties, name

    def __getitem__(self, key: str) -> Type:
        return self.schemas.type(self.properties[key], f"{self.name}.{key}")

    def __iter__(self) -> Any:
        return iter(self.properties)

    def __len__(self) -> int:
        return len(self.properties)


@cache
def core_definitions(version: str) -> Mapping[str, Any]:
    """The definitions `kubernetes-validate` holds for a Kubernetes version."""
    folder = resources.files("kubernetes_validate") / "kubernetes-json-schema" / f"v{version}-local"
    return cast(Mapping[str, Any], json.loads((folder / "_definitions.json").read_text())["$defs"])


_POD_TEMPLATE = {"$ref": "#/$defs/io.k8s.api.core.v1.PodTemplateSpec"}
_RAY_CLUSTER_SPEC = {"type": "object", "properties": {
    "rayVersion": {"type": "string"},
    "headGroupSpec": {"type": "object", "properties": {"rayStartParams": {"type": "object",
                                                                          "additionalProperties": {"type": "string"}},
                                                       "template": _POD_TEMPLATE}},
    "workerGroupSpecs": {"type": "array", "items": {"type": "object", "properties": {
        "groupName": {"type": "string"}, "replicas": {"type": "integer"}, "template": _POD_TEMPLATE}}},
}}
_RAY_JOB_SPEC = {"type": "object", "properties": {
    "entrypoint": {"type": "string"}, "rayClusterSpec": _RAY_CLUSTER_SPEC, "submitterPodTemplate": _POD_TEMPLATE,
    "clusterSelector": {"type": "object", "additionalProperties": {"type": "string"}},
}}
# The fields of the CRDs' specs that lead to pod templates (ray-operator/config/crd/bases, KubeRay 1.7; Kubeflow
# training-operator v1), each PodTemplateSpec the core one.
CRD_SCHEMAS: dict[str, Mapping[str, Any]] = {
    "RayCluster": _RAY_CLUSTER_SPEC,
    "RayJob": _RAY_JOB_SPEC,
    "RayService": {"type": "object", "properties": {"rayClusterConfig": _RAY_CLUSTER_SPEC}},
    "RayCronJob": {"type": "object", "properties": {"schedule": {"type": "string"}, "jobTemplate": _RAY_JOB_SPEC}},
    "PyTorchJob": {"type": "object", "properties": {"pytorchReplicaSpecs": {
        "type": "object", "additionalProperties": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "template": _POD_TEMPLATE}}}}},
}
_CORE = {"Pod": "core", "ReplicationController": "core", "Deployment": "apps", "StatefulSet": "apps",
         "DaemonSet": "apps", "ReplicaSet": "apps", "Job": "batch", "CronJob": "batch"}
_REQUEST = {"type": "object", "properties": {
    **{part: {"type": "object", "properties": {"group": {"type": "string"}, "version": {"type": "string"},
                                               what: {"type": "string"}}}
       for part, what in (("kind", "kind"), ("resource", "resource"))},
    **{name: {"type": "string"} for name in ("subResource", "operation", "namespace", "name")},
}}


def kind_type(kind: str, version: str, spec: Mapping[str, Any] | None = None) -> Type:
    """`object` as the type checker sees it for `kind`: the core schema, or CRD_SCHEMAS' spec (or `spec`)."""
    schemas = Schemas(core_definitions(version))
    if kind in _CORE:
        return schemas.type({"$ref": f"#/$defs/io.k8s.api.{_CORE[kind]}.v1.{kind}"}, kind)
    crd = {"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                            "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1."
                                                                 "ObjectMeta"},
                                            "spec": spec if spec is not None else CRD_SCHEMAS[kind]}}
    return schemas.type(crd, kind)


def type_errors(policy: Mapping[str, Any], obj: Type, version: str) -> list[str]:
    """What the API server's type checker reports of each expression of `policy` for a kind typed `obj`."""
    schemas = Schemas(core_definitions(version))
    env = {"object": obj, "oldObject": obj, "params": schemas.type({"$ref": "#/$defs/io.k8s.api.core.v1.ConfigMap"},
                                                                   "ConfigMap"),
           "request": schemas.type(_REQUEST, "AdmissionRequest")}
    variables: dict[str, Type] = {}
    env["variables"] = Type("variables", fields=variables)
    errors: list[str] = []
    for variable in policy["spec"]["variables"]:
        checker = _Checker(env, errors, variable["name"])
        variables[variable["name"]] = checker.check(ENV.compile(variable["expression"]))
    for validation in policy["spec"]["validations"]:
        for what, want in (("expression", BOOL), ("messageExpression", STRING)):
            found = _Checker(env, errors, what).check(ENV.compile(validation[what]))
            if found not in (want, DYN):
                errors.append(f"{what}: of type {found.kind}, not {want.kind}")
    return errors


class _Checker:
    """The types of one expression's parts, bottom up; what does not type-check is an error."""

    def __init__(self, env: Mapping[str, Type], errors: list[str], where: str) -> None:
        self.env, self.errors, self.where = dict(env), errors, where

    def fail(self, message: str) -> Type:
        self.errors.append(f"{self.where}: {message}")
        return DYN

    def check(self, tree: Tree) -> Type:
        method: Callable[[Tree], Type] = getattr(self, tree.data, self.passthrough)
        return method(tree)

    def passthrough(self, tree: Tree) -> Type:
        if len(tree.children) != 1:
            raise AssertionError(f"unexpected {tree.data} with {len(tree.children)} children")
        return self.check(cast(Tree, tree.children[0]))

    def _children(self, tree: Tree) -> list[Type]:
        return [self.check(child) for child in tree.children if isinstance(child, lark.Tree)]

    def expr(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        condition, yes, no = self._children(tree)
        self.expect(condition, BOOL, "a condition")
        return self.unify(yes, no, "?:")

    def conditionalor(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        for found in self._children(tree):
            self.expect(found, BOOL, tree.data)
        return BOOL

    conditionaland = conditionalor

    def relation(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        operator = cast(Tree, tree.children[0])
        left = self.check(cast(Tree, operator.children[0]))
        right = self.check(cast(Tree, tree.children[1]))
        if operator.data == "relation_in":
            if right.kind not in ("list", "map", "dyn"):
                self.fail(f"`in` on a {right.kind}")
            elif right.element is not None:
                self.unify(left, right.element if right.kind == "list" else STRING, "in")
        else:
            self.unify(left, right, operator.data)
        return BOOL

    def addition(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        operator = cast(Tree, tree.children[0])
        left = self.check(cast(Tree, operator.children[0]))
        right = self.check(cast(Tree, tree.children[1]))
        if operator.data == "addition_sub":
            return self.expect(self.unify(left, right, "-"), INT, "-")
        return self.unify(left, right, "+")

    def multiplication(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        operator = cast(Tree, tree.children[0])
        for found in (self.check(cast(Tree, operator.children[0])), self.check(cast(Tree, tree.children[1]))):
            self.expect(found, INT, operator.data)
        return INT

    def unary(self, tree: Tree) -> Type:
        if len(tree.children) == 1:
            return self.passthrough(tree)
        operator, operand = tree.children
        return self.expect(self.check(cast(Tree, operand)), BOOL if cast(Tree, operator).data ==
                           "unary_not" else INT, "unary")

    def member_dot(self, tree: Tree) -> Type:
        return self.select(self.check(cast(Tree, tree.children[0])), cast(lark.Token, tree.children[1]).value)

    def member_index(self, tree: Tree) -> Type:
        target, index = self._children(tree)
        if target.kind == "list":
            self.expect(index, INT, "a list index")
        elif target.kind == "map":
            self.expect(index, STRING, "a map key")
        elif target.kind != "dyn":
            return self.fail(f"indexing a {target.kind}")
        return target.element or DYN

    def member_dot_arg(self, tree: Tree) -> Type:
        name = cast(lark.Token, tree.children[1]).value
        target = self.check(cast(Tree, tree.children[0]))
        arguments = cast(Tree, tree.children[2]).children if len(tree.children) == 3 else []
        if name in ("map", "filter", "all", "exists"):
            variable = cast(lark.Token, next(cast(Tree, arguments[0]).find_data("ident")).children[0]).value
            if target.kind not in ("list", "map", "dyn"):
                return self.fail(f"{name}() over a {target.kind}")
            inner = _Checker({**self.env, variable: target.element if target.kind == "list" and target.element
                              else STRING if target.kind == "map" else DYN}, self.errors, self.where)
            body = inner.check(cast(Tree, arguments[1]))
            if name == "map":
                return Type("list", element=body)
            self.expect(body, BOOL, name)
            return target if name == "filter" else BOOL
        args = [self.check(cast(Tree, argument)) for argument in arguments]
        return self.method(target, name, args)

    def method(self, target: Type, name: str, args: list[Type]) -> Type:
        if name == "size" and target.kind in ("list", "map"):
            return INT
        if name in ("sum", "join"):
            want = INT if name == "sum" else STRING
            if target.kind != "dyn" and (target.kind != "list" or target.element not in (want, DYN, None)):
                return self.fail(f"{name}() on a {_show(target)}")
            for arg in args:
                self.expect(arg, STRING, f"{name}()")
            return want
        if name not in _STRING_METHODS:
            return self.fail(f"no function {name}()")
        result, parameters = _STRING_METHODS[name]
        self.expect(target, STRING, f"{name}()")
        if not any(len(args) == len(overload) for overload in parameters):
            return self.fail(f"{name}() given {len(args)} arguments")
        for arg, want in zip(args, next(o for o in parameters if len(o) == len(args)), strict=True):
            self.expect(arg, want, f"{name}()")
        return result

    def primary(self, tree: Tree) -> Type:
        child = cast(Tree, tree.children[0])
        if child.data == "literal":
            token = cast(lark.Token, child.children[0])
            return {"STRING_LIT": STRING, "MLSTRING_LIT": STRING, "INT_LIT": INT, "BOOL_LIT": BOOL,
                    "NULL_LIT": Type("null")}.get(token.type, DYN)
        if child.data == "paren_expr":
            return self.check(cast(Tree, child.children[0]))
        if child.data == "list_lit":
            elements = self._children(cast(Tree, child.children[0])) if child.children else []
            return Type("list", element=reduce(lambda a, b: self.unify(a, b, "a list literal"), elements)
                        if elements else None)
        if child.data == "ident":
            name = cast(lark.Token, child.children[0]).value
            return self.env[name] if name in self.env else self.fail(f"undeclared reference to {name!r}")
        if child.data == "ident_arg":
            return self.call(child)
        return self.fail(f"unchecked {child.data}")

    def call(self, tree: Tree) -> Type:
        name = cast(lark.Token, tree.children[0]).value
        arguments = cast(Tree, tree.children[1]).children if len(tree.children) == 2 else []
        if name == "has":
            selection = cast(Tree, arguments[0])
            while selection.data != "member_dot" and len(selection.children) == 1 and isinstance(
                    selection.children[0], lark.Tree):
                selection = selection.children[0]
            if selection.data != "member_dot":
                return self.fail("has() of no field selection")
            self.member_dot(selection)
            return BOOL
        args = [self.check(cast(Tree, argument)) for argument in arguments]
        results = {"size": INT, "int": INT, "string": STRING, "dyn": DYN}
        if name not in results:
            return self.fail(f"no function {name}()")
        return args[0] if name == "dyn" else results[name]

    def select(self, target: Type, name: str) -> Type:
        if target.kind in ("object", "variables"):
            assert target.fields is not None
            if name not in target.fields:
                return self.fail(f"undefined field {name!r} of {target.name or target.kind}")
            return target.fields[name]
        if target.kind == "map":
            return target.element or DYN
        if target.kind == "dyn":
            return DYN
        return self.fail(f"selecting {name!r} of a {target.kind}")

    def expect(self, found: Type, want: Type, where: str) -> Type:
        if found.kind not in (want.kind, "dyn"):
            self.fail(f"{where}: a {found.kind}, not a {want.kind}")
        return want

    def unify(self, a: Type, b: Type, where: str) -> Type:
        """The one type two operands share (a list literal's elements, `+`, `==`, the branches of `?:`)."""
        if a.kind == "dyn" or a == b:
            return b
        if b.kind == "dyn":
            return a
        if a.kind == b.kind == "list":
            if a.element is None or b.element is None:
                return a if b.element is None else b
            return Type("list", element=self.unify(a.element, b.element, where))
        if "null" in (a.kind, b.kind) and "object" in (a.kind, b.kind):
            return a if a.kind == "object" else b
        return self.fail(f"{where}: no overload for {_show(a)} and {_show(b)}")


# The string functions the policies may call: (result, the argument types of each overload).
_STRING_METHODS: dict[str, tuple[Type, tuple[tuple[Type, ...], ...]]] = {
    **{name: (BOOL, ((STRING,),)) for name in ("contains", "startsWith", "endsWith", "matches")},
    "size": (INT, ((),)), "lowerAscii": (STRING, ((),)), "upperAscii": (STRING, ((),)), "charAt": (STRING, ((INT,),)),
    "substring": (STRING, ((INT,), (INT, INT))), "indexOf": (INT, ((STRING,), (STRING, INT))),
    "lastIndexOf": (INT, ((STRING,), (STRING, INT))),
    "split": (Type("list", element=STRING), ((STRING,), (STRING, INT))),
    "replace": (STRING, ((STRING, STRING), (STRING, STRING, INT))),
}


def _show(found: Type) -> str:
    if found.kind == "list":
        return f"list({_show(found.element) if found.element else ''})"
    return found.name or found.kind
