#!/usr/bin/env python3
"""Reproduces one replayground run on real SQLite files.

Written by `replayground export --python`. It needs nothing but Python 3.8+
and its standard library's sqlite3. It creates the scenario's database files
(as its setup left them) in a temporary folder, starts one process per
attempt, each with its own connection to each database it uses (timeout 0:
SQLITE_BUSY comes back at once; autocommit: the scenario's own BEGIN and
COMMIT delimit its transactions), runs the statements in the schedule's
order, kills an attempt's process with SIGKILL where the run killed it, and
prints each step's result beside what the playground showed. It ends with the
committed tables compared, and the checks the playground reported.

Exit status: 0 when every step and every table matches the playground, 1 when
something differs (it says what), 2 when it cannot run.
"""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile

RUN = json.loads(__RUN__)


def decode(value):
    """A value as the playground wrote it, as Python's sqlite3 gives it."""
    if isinstance(value, dict) and "blob" in value:
        return bytes.fromhex(value["blob"])
    return value


def encode(value):
    """A value sqlite3 returned, as the playground writes it."""
    if isinstance(value, bytes):
        return {"blob": value.hex()}
    return value


def worker(folder):
    """One attempt's process: its connections, and the statements it is sent."""
    connections = {}
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "close":
            # A graceful close: SQLite rolls back an open transaction.
            for connection in connections.values():
                connection.close()
            print(json.dumps({"kind": "closed"}), flush=True)
            return
        database = command["database"]
        try:
            if database not in connections:
                connection = sqlite3.connect(
                    os.path.join(folder, database), timeout=0, isolation_level=None
                )
                pragmas = RUN["pragmas"].get(database, "")
                if pragmas.strip():
                    connection.executescript(pragmas)
                connections[database] = connection
            connection = connections[database]
            cursor = connection.execute(command["sql"], [decode(v) for v in command["params"]])
            rows = [[encode(v) for v in row] for row in cursor.fetchall()]
            reply = {"kind": "rows", "rows": rows, "changes": cursor.rowcount}
        except sqlite3.Error as error:
            code = getattr(error, "sqlite_errorcode", None)
            # Python 3.11+ gives the extended code: SQLITE_BUSY_SNAPSHOT (517) is a
            # failure no wait cures, as the playground shows it.
            busy = code == 5 or (code is None and "database is locked" in str(error))
            reply = {"kind": "busy"} if busy else {"kind": "error", "message": str(error)}
        print(json.dumps(reply), flush=True)


def shown(result):
    """A step's result in a few words."""
    kind = result["kind"]
    if kind == "rows":
        rows = result["rows"]
        if rows:
            return json.dumps(rows[:3]) + (" …" if len(rows) > 3 else "")
        changes = result.get("changes", 0)
        return f"{changes} changed" if changes and changes > 0 else "ok"
    if kind == "busy":
        return "SQLITE_BUSY"
    if kind == "error":
        return "error: " + result["message"]
    return "(no SQL)"


def same(expected, actual):
    """Whether a real result is the one the playground showed."""
    if expected["kind"] != actual["kind"]:
        return False
    if expected["kind"] != "rows":
        return True
    if expected["rows"] != actual["rows"]:
        return False
    # Python reports changes only for INSERT, UPDATE and DELETE (-1 otherwise).
    changes = actual.get("changes", -1)
    return changes < 0 or changes == expected.get("changes", changes)


def main():
    folder = tempfile.mkdtemp(prefix="replayground-")
    processes = {}
    differences = 0
    compared = 0
    try:
        for database in RUN["databases"]:
            with open(os.path.join(folder, database["name"]), "wb") as out:
                out.write(bytes.fromhex(database["hex"]))
        print(f"scenario {RUN['scenario']}, schedule {RUN['schedule']}, SQLite {sqlite3.sqlite_version}")
        print(f"databases in {folder}")
        for step in RUN["steps"]:
            attempt = step["attempt"]
            label = f"{step['index'] + 1:>3}. {attempt}: {step['name']}"
            if step["action"] == "crash":
                process = processes.pop(attempt, None)
                if process is not None:
                    os.kill(process.pid, signal.SIGKILL)
                    process.wait()
                print(f"{label}  killed (SIGKILL)")
                continue
            if step["sql"] is None:
                print(f"{label}  (no SQL)")
            else:
                if attempt not in processes:
                    processes[attempt] = subprocess.Popen(
                        [sys.executable, os.path.abspath(__file__), "--worker", folder],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                process = processes[attempt]
                command = {
                    "op": "sql",
                    "database": step["database"],
                    "sql": step["sql"],
                    "params": step["params"],
                }
                process.stdin.write(json.dumps(command) + "\n")
                process.stdin.flush()
                actual = json.loads(process.stdout.readline())
                expected = step["expected"]
                compared += 1
                if same(expected, actual):
                    print(f"{label}  {shown(actual)}  (as in the playground)")
                else:
                    differences += 1
                    print(f"{label}  {shown(actual)}  DIFFERS: the playground showed {shown(expected)}")
            if step["ends"] and attempt in processes:
                process = processes.pop(attempt)
                process.stdin.write(json.dumps({"op": "close"}) + "\n")
                process.stdin.flush()
                process.stdout.readline()
                process.wait()
        for process in processes.values():
            process.stdin.write(json.dumps({"op": "close"}) + "\n")
            process.stdin.flush()
            process.stdout.readline()
            process.wait()
        processes.clear()
        print("committed tables at the end:")
        for database, tables in RUN["tables"].items():
            connection = sqlite3.connect(os.path.join(folder, database), isolation_level=None)
            for table, expected in tables.items():
                rows = connection.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
                rows = [[encode(v) for v in row] for row in rows]
                compared += 1
                if rows == expected["rows"]:
                    print(f"  {database} {table}: {len(rows)} rows, as in the playground")
                else:
                    differences += 1
                    print(f"  {database} {table}: DIFFERS: {json.dumps(rows)} here, {json.dumps(expected['rows'])} in the playground")
            connection.close()
        failed = [c for c in RUN["checks"] if not c["pass"]]
        for check in failed:
            print(f"the playground's check failed: {check['name']}: expected {check['expected']}, got {check['actual']}")
        if not failed:
            print("the playground's checks all held")
        print(f"{compared} results compared, {differences} different")
        return 1 if differences else 0
    finally:
        for process in processes.values():
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        sys.exit(main())
