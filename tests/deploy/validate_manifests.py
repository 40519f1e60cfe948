#!/usr/bin/python3
"""Validates deploy/k8s and deploy/agones against the Kubernetes and Agones schemas.

Kubernetes objects (and the pod templates inside Agones objects) are checked against the
Kubernetes API's own models from Debian's python3-kubernetes (generated from the Kubernetes
OpenAPI document): every member must be a field of its model (strict field validation, as
`kubectl apply --validate=strict` does), of the model's type, and required fields must be there.
Agones objects are checked with python3-jsonschema against tests/deploy/schemas/agones.schema.json.

Then it proves it can fail: broken copies of the manifests (an unknown field, a wrong type, a
missing required field, a value outside an enum) must each be rejected.

Usage: tests/deploy/validate_manifests.py [REPO]   (exit 0: all valid and every broken copy refused)
Runs with Debian's python3 (the shebang), which has python3-kubernetes, -jsonschema and -yaml.
"""
import copy
import json
import sys
from pathlib import Path

import jsonschema
import kubernetes.client as k8s
import yaml

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "agones.schema.json").read_text())
MODELS = {"Deployment": "V1Deployment", "Service": "V1Service", "PersistentVolumeClaim": "V1PersistentVolumeClaim"}


def model_errors(value, type_name, path):
    """Errors of `value` against the python3-kubernetes model or type named `type_name`."""
    if type_name.startswith("list["):
        if not isinstance(value, list):
            return [f"{path}: must be a list"]
        return [e for i, v in enumerate(value) for e in model_errors(v, type_name[5:-1], f"{path}[{i}]")]
    if type_name.startswith("dict("):
        if not isinstance(value, dict):
            return [f"{path}: must be an object"]
        inner = type_name[type_name.index(",") + 1:-1].strip()
        return [e for key, v in value.items() for e in model_errors(v, inner, f"{path}.{key}")]
    checks = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "datetime": lambda v: isinstance(v, str),
        "date": lambda v: isinstance(v, str),
        "object": lambda v: True,  # IntOrString, quantities given as numbers, raw extensions
    }
    if type_name in checks:
        return [] if checks[type_name](value) else [f"{path}: must be of type {type_name}"]
    cls = getattr(k8s, type_name)
    if not isinstance(value, dict):
        return [f"{path}: must be an object ({type_name})"]
    by_json = {json_name: attr for attr, json_name in cls.attribute_map.items()}
    errors = []
    for key, v in value.items():
        if key not in by_json:
            errors.append(f"{path}.{key}: unknown field of {type_name}")
        else:
            errors += model_errors(v, cls.openapi_types[by_json[key]], f"{path}.{key}")
    try:  # the model's own setters refuse a missing required field
        cls(**{by_json[key]: v for key, v in value.items() if key in by_json})
    except ValueError as e:
        errors.append(f"{path}: {e}")
    return errors


def kubernetes_model(validator, model, instance, schema):
    for message in model_errors(instance, model, "$"):
        yield jsonschema.ValidationError(f"({model}) {message}")


AgonesValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                               {"x-kubernetes-model": kubernetes_model})


def errors_of(doc):
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind in MODELS:
        if doc.get("apiVersion") != ("apps/v1" if kind == "Deployment" else "v1"):
            return [f"apiVersion {doc.get('apiVersion')!r} is not the one of {kind}"]
        return model_errors(doc, MODELS[kind], "$")
    if kind in SCHEMA["$defs"] and kind[0].isupper():
        schema = {**SCHEMA, "$ref": f"#/$defs/{kind}"}
        return [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}"
                for e in AgonesValidator(schema).iter_errors(doc)]
    return [f"unknown kind {kind!r}"]


def breakages(doc):
    """(what, broken copy) pairs that a schema-valid validator must each refuse."""
    def edit(what, f):
        d = copy.deepcopy(doc)
        f(d)
        return what, d
    out = [edit("an unknown top-level field", lambda d: d.update(specc={}))]
    kind = doc["kind"]
    if kind == "Deployment":
        c = lambda d: d["spec"]["template"]["spec"]["containers"][0]
        out += [edit("replicas as text", lambda d: d["spec"].update(replicas="one")),
                edit("no selector", lambda d: d["spec"].pop("selector")),
                edit("a misspelt container field", lambda d: c(d).update(imagee="x")),
                edit("a containerPort as text", lambda d: c(d).update(ports=[{"containerPort": "7777"}])),
                edit("a container without a name", lambda d: c(d).pop("name"))]
    elif kind == "Service":
        out += [edit("a port as text", lambda d: d["spec"]["ports"][0].update(port="http")),
                edit("a misspelt spec field", lambda d: d["spec"].update(selectr={}))]
    elif kind == "PersistentVolumeClaim":
        out += [edit("accessModes as text", lambda d: d["spec"].update(accessModes="ReadWriteOnce"))]
    elif kind in ("GameServer", "Fleet"):
        spec = (lambda d: d["spec"]) if kind == "GameServer" else (lambda d: d["spec"]["template"]["spec"])
        out += [edit("a misspelt portPolicy", lambda d: spec(d)["ports"][0].update(portPolicy="Dynamc")),
                edit("an unknown spec field", lambda d: spec(d).update(healthh={})),
                edit("eviction.safe outside its enum", lambda d: spec(d)["eviction"].update(safe="Sometimes")),
                edit("a misspelt field in the pod template",
                     lambda d: spec(d)["template"]["spec"]["containers"][0].update(imagee="x")),
                edit("a pod template without containers", lambda d: spec(d)["template"]["spec"].pop("containers"))]
        if kind == "Fleet":
            out += [edit("replicas as text", lambda d: d["spec"].update(replicas="2"))]
    elif kind == "FleetAutoscaler":
        out += [edit("a Buffer policy without buffer", lambda d: d["spec"]["policy"].pop("buffer")),
                edit("bufferSize as a word", lambda d: d["spec"]["policy"]["buffer"].update(bufferSize="two"))]
    return out


def main():
    files = sorted((ROOT / "deploy").glob("*/*.yaml"))
    failures = 0
    kinds = set()
    for f in files:
        for doc in yaml.safe_load_all(f.read_text()):
            if doc is None:
                continue
            name = f"{f.relative_to(ROOT)} ({doc.get('kind')})"
            kinds.add(doc.get("kind"))
            errors = errors_of(doc)
            if errors:
                failures += 1
                print(f"INVALID {name}:\n  " + "\n  ".join(errors))
            else:
                print(f"valid   {name}")
            for what, broken in breakages(doc):
                if not errors_of(broken):
                    failures += 1
                    print(f"ACCEPTED {name} with {what}: the validator cannot tell")
    want = {"Deployment", "Service", "PersistentVolumeClaim", "GameServer", "Fleet", "FleetAutoscaler"}
    if kinds != want:
        failures += 1
        print(f"expected exactly the kinds {sorted(want)}, found {sorted(k for k in kinds if k)}")
    print(f"manifests: {len(files)} files, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
