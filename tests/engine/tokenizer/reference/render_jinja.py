#!/usr/bin/python3
"""Reference renderer for chat templates: jinja2 configured as Hugging Face transformers does.

Usage: render_jinja.py TEMPLATE [CONTEXT.json]   (the context is read from stdin when not given)
       render_jinja.py --batch JOBS.json OUT.json

The environment matches transformers' chat-template setup: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks and the loopcontrols extension, a `{% generation %}` tag that renders
its body, HF's tojson override (json.dumps without HTML escaping) and the raise_exception global.
strftime_now is deliberately not provided, so the output is deterministic.
Single template: prints the rendered bytes exactly (UTF-8); on a template error prints it to
stderr and exits 1.
Batch: JOBS.json is a list of {"template_path": PATH, "context": {...}}; OUT.json gets one result
per job, in order: {"ok": true, "text": RENDERED} or {"ok": false, "error": "TYPE: MESSAGE"} (the
line the single mode prints, without its newline). Exits 0 once every job has a result.
"""
import json
import sys

try:
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError as e:  # the C++ test reports this line
    sys.stderr.write("jinja2 is not installed for %s: %s\n" % (sys.executable, e))
    sys.exit(2)


class GenerationTag(Extension):
    """`{% generation %}...{% endgeneration %}` renders its body (transformers' AssistantTracker)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def make_env():
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def read_template(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def render(env, source, context):
    """Returns (True, UTF-8 bytes) or (False, "TYPE: MESSAGE") for any template error."""
    try:
        return True, env.from_string(source).render(**context).encode("utf-8")
    except Exception as e:  # any template error: name its type and message
        return False, "%s: %s" % (type(e).__name__, e)


def run_batch(jobs_path, out_path):
    with open(jobs_path, encoding="utf-8") as f:
        jobs = json.load(f)
    env = make_env()
    sources = {}
    results = []
    for job in jobs:
        path = job["template_path"]
        if path not in sources:
            sources[path] = read_template(path)
        ok, out = render(env, sources[path], job["context"])
        results.append({"ok": True, "text": out.decode("utf-8")} if ok else {"ok": False, "error": out})
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False)
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--batch":
        return run_batch(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 2 or len(sys.argv) > 3 or sys.argv[1].startswith("--"):
        sys.stderr.write("usage: render_jinja.py TEMPLATE [CONTEXT.json] | --batch JOBS.json OUT.json\n")
        return 2
    source = read_template(sys.argv[1])
    if len(sys.argv) > 2:
        with open(sys.argv[2], encoding="utf-8") as f:
            context = json.load(f)
    else:
        context = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    ok, out = render(make_env(), source, context)
    if not ok:
        sys.stderr.write(out + "\n")
        return 1
    sys.stdout.buffer.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
