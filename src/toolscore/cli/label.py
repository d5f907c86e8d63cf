"""`toolscore label BATCH`: the labelling web page for one person, on this machine only.

The command checks the store and the batch, listens on 127.0.0.1 (a free port unless
`--port`), prints the page's address with the session's token and serves the page until
Ctrl-C. Every label is saved the moment it is given, so stopping loses nothing.
"""

from __future__ import annotations

import getpass
import secrets
import socket
import sys

import click

from toolscore.calibration.batches import Batches
from toolscore.cli.common import input_errors
from toolscore.cli.options import db_option
from toolscore.errors import InputError
from toolscore.report.printable import printable
from toolscore.store import open_store, store_path

HOST = "127.0.0.1"
DEFAULT_TIMEOUT = 10.0
"""`--request-timeout`'s default (`calibration.serving.DEFAULT_TIMEOUT`, not imported here:
the web stack loads only when the page is served)."""
DEFAULT_MAX_CONNECTIONS = 32
"""`--max-connections`'s default (`calibration.serving.DEFAULT_MAX_CONNECTIONS`)."""
DEFAULT_LABELLER = "labeller"
"""The labeller's name when neither `--labeller` nor the user name is known."""


def register(group: click.Group) -> None:
    """Add `toolscore label` to the `toolscore` command group."""
    group.add_command(label_command)


def default_labeller() -> str:
    """The name labels are saved under when `--labeller` is not given: the user's login."""
    try:
        return getpass.getuser().strip() or DEFAULT_LABELLER
    except (OSError, KeyError):
        return DEFAULT_LABELLER


@click.command("label")
@click.argument("batch")
@click.option(
    "--labeller",
    metavar="NAME",
    help="Your name, saved with each label (default: your user name). Several people can "
    "label the same batch, each under their own name.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on, on 127.0.0.1 only (0: a free port).",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Seconds a client has to send a request's headers, and again its body; a slower "
    "connection is closed.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=DEFAULT_MAX_CONNECTIONS,
    show_default=True,
    help="Connections open at once; one more is answered 503 and closed.",
)
@db_option
@input_errors
def label_command(
    batch: str,
    labeller: str | None,
    port: int,
    request_timeout: float,
    max_connections: int,
    db_path: str | None,
) -> None:
    """Label the cases of BATCH (an id or `latest`) in a web page on this machine: one case
    at a time, correct, incorrect or unsure, each saved at once; run it again to resume."""
    # The web stack is imported only here: every other command starts faster without it.
    import uvicorn  # noqa: PLC0415

    from toolscore.calibration.serving import ServingLimits, bounded_protocol  # noqa: PLC0415
    from toolscore.calibration.web import TOKEN_PARAM, create_app  # noqa: PLC0415

    name = (labeller if labeller is not None else default_labeller()).strip()
    if not name:
        raise InputError("--labeller", "must be a non-empty name")
    where = store_path(db_path)
    with open_store(where, create=False) as store:
        info = Batches.of(store).info(batch)
        done = len(Batches.of(store).labels(info.id, name))
    listener = listen(port)
    token = secrets.token_urlsafe(24)
    address = f"http://{HOST}:{listener.getsockname()[1]}/?{TOKEN_PARAM}={token}"
    click.echo(
        f"labelling batch {info.id} ({info.size} cases, {done} labelled by {printable(name)}) at\n"
        f"  {address}\n"
        "Ctrl-C to stop; labels are saved as you go"
    )
    sys.stdout.flush()
    config = uvicorn.Config(
        create_app(where, info.id, name, token),
        log_level="warning",
        access_log=False,
        lifespan="on",
        proxy_headers=False,
        server_header=False,
        http=bounded_protocol(ServingLimits(request_timeout, max_connections)),
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # uvicorn stops on Ctrl-C, then raises it again for the caller
    finally:
        listener.close()
    if not server.started:
        raise InputError(str(where), "the labelling page could not start (see above)")
    with open_store(where, create=False) as store:
        done = len(Batches.of(store).labels(info.id, name))
    click.echo(
        f"stopped: {done} of {info.size} cases of batch {info.id} labelled by {printable(name)}"
    )


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1 at `port` (0: a port the system picks)."""
    try:
        return socket.create_server((HOST, port))
    except OSError as error:
        raise InputError("--port", f"cannot listen on {HOST}:{port}: {error.strerror}") from None
