from __future__ import annotations

import json
from typing import Any

from client.tools.contexts import ContextClose, ContextCreate, ContextList, ContextSaveStorage, ContextSwitch

from ..errors import BadInput, LimitExceeded
from ..paths import confined
from ..sessions import BrowserSession, NamedContext
from .context import Outcome, ToolContext, handler


@handler(ContextCreate)
async def context_create(ctx: ToolContext, model: ContextCreate) -> Outcome:
    session = ctx.session
    if model.name_ in session.contexts:
        raise BadInput(f"name: a context named {model.name_!r} already exists", field="name")
    if len(session.contexts) >= ctx.settings.max_contexts:
        raise LimitExceeded(f"this session already has {len(session.contexts)} contexts, the limit "
                            f"({ctx.settings.max_contexts}); close one first", field="name")
    proxy = model.proxy.model_dump(exclude_none=True) if model.proxy else None
    session.contexts[model.name_] = NamedContext(model.name_, proxy=proxy, storage=_storage_of(ctx, model),
                                                 max_tabs=ctx.settings.max_tabs)
    session.current = model.name_
    await session.tab(ctx.host)
    info = _describe(session, model.name_)
    return Outcome(text=f"Created context {model.name_!r} and made it active{_via(info)}", data=info)


@handler(ContextSwitch)
async def context_switch(ctx: ToolContext, model: ContextSwitch) -> Outcome:
    _existing(ctx.session, model.name_)
    ctx.session.current = model.name_
    await ctx.session.tab(ctx.host)
    return Outcome(text=f"Switched to context {model.name_!r}\n{await _line(ctx.session)}",
                   data=_describe(ctx.session, model.name_))


@handler(ContextList)
async def context_list(ctx: ToolContext, model: ContextList) -> Outcome:
    listing = [_describe(ctx.session, name) for name in ctx.session.contexts]
    lines = [f"{'*' if c['isActive'] else ' '} {c['name']}: {c['pageCount']} page(s), {c['currentUrl'] or '-'}"
             f"{_via(c)}" for c in listing]
    return Outcome(text="Contexts:\n" + "\n".join(lines), data=listing)


@handler(ContextClose)
async def context_close(ctx: ToolContext, model: ContextClose) -> Outcome:
    session = ctx.session
    _existing(session, model.name_)
    if len(session.contexts) == 1:
        raise BadInput("Cannot close the only remaining context", field="name")
    await session.contexts.pop(model.name_).close()
    if session.current == model.name_:
        session.current = "default" if "default" in session.contexts else next(iter(session.contexts))
    return Outcome(text=f"Closed context {model.name_!r}; active: {session.current!r}",
                   data={"closed": model.name_, "active": session.current})


@handler(ContextSaveStorage)
async def context_save_storage(ctx: ToolContext, model: ContextSaveStorage) -> Outcome:
    name = model.name_ or ctx.session.current
    nc = _existing(ctx.session, name)
    if nc.context is None:
        raise BadInput(f"name: context {name!r} has not been opened since the browser restarted; "
                       "switch to it first", field="name")
    state = await nc.context.storage_state()
    data: dict[str, Any] = {"name": name, "storageState": state}
    if model.path:
        path = confined(ctx.settings.state_dir, model.path, "path")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(state))
        data["path"] = model.path
    saved = f" to {model.path}" if model.path else ""
    return Outcome(text=f"Saved the storage of context {name!r}{saved}: {len(state['cookies'])} cookie(s), "
                        f"{len(state['origins'])} origin(s)", data=data)


def _storage_of(ctx: ToolContext, model: ContextCreate) -> dict[str, Any] | None:
    if not isinstance(model.storageState, str):
        return model.storageState
    path = confined(ctx.settings.state_dir, model.storageState, "storageState")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BadInput(f"storageState: cannot read {model.storageState!r} from the state directory "
                       f"({type(exc).__name__})", field="storageState") from None


def _existing(session: BrowserSession, name: str) -> NamedContext:
    if name not in session.contexts:
        raise BadInput(f"name: no context {name!r}; contexts: {', '.join(session.contexts)}", field="name")
    return session.contexts[name]


def _describe(session: BrowserSession, name: str) -> dict[str, Any]:
    nc = session.contexts[name]
    tabs = [t for t in nc.tabs if not t.closed]
    saved = session.checkpoint.contexts.get(name) if session.checkpoint else None
    urls = [t.page.url for t in tabs] if nc.context is not None else (saved.tabs if saved else [])
    return {"name": name, "isActive": name == session.current, "pageCount": len(urls),
            "currentUrl": urls[min(nc.active, len(urls) - 1)] if urls else None,
            "proxy": (nc.proxy or {}).get("server")}


def _via(info: dict[str, Any]) -> str:
    return f" (proxy {info['proxy']})" if info.get("proxy") else ""


async def _line(session: BrowserSession) -> str:
    page = session.tabs[session.active].page
    return f"Page: {await page.title()!r} at {page.url}"
