"""One declaration per setting (autotune.settings): the command line's option and the API's
check come from it, and an error naming a setting is shown with its flag, the message's own
words untouched."""

from __future__ import annotations

import argparse

import pytest

from autotune import settings
from autotune.cli.args import add_setting
from autotune.cli.errors import UsageError, message
from autotune.errors import PlanError, Text, ref
from autotune.run.resolve import options_of, plan_of


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("trials", 0, "trials must be at least 1, got 0"),
        ("seed", -1, "seed must be between 0 and 4294967295"),
        ("workers", 10**6, "workers must be at most"),
        ("timeout", -2.0, "timeout must be a positive number"),
        ("verify_top", -1, "verify_top must not be negative"),
    ],
)
def test_the_api_refuses_what_the_flag_refuses(name: str, value: object, why: str) -> None:
    plan = plan_of("32x32x32")
    with pytest.raises(PlanError, match=why) as refused:
        options_of(plan, **{name: value})
    assert refused.value.setting == name
    parser = argparse.ArgumentParser()
    parser.error = lambda text: (_ for _ in ()).throw(UsageError(text))  # type: ignore[method-assign]
    add_setting(parser, name)
    with pytest.raises(UsageError, match=why.split(" ", 1)[1].split(",")[0]):
        parser.parse_args([settings.SETTINGS[name].flag, str(value)])


def test_a_plan_setting_is_checked_by_its_declaration() -> None:
    with pytest.raises(PlanError, match="max_scratchpad_words must be at least 1") as refused:
        plan_of("32x32x32", search_machine=True, max_scratchpad_words=0)
    assert refused.value.setting == "max_scratchpad_words"


def test_an_error_names_settings_as_the_api_and_as_the_command_line_says_them() -> None:
    exc = PlanError(
        Text("resume it with ", ref("sampler", "tpe"), " and ", ref("allow_sampler_change", True)),
        setting="study",
    )
    assert str(exc) == "resume it with sampler=tpe and allow_sampler_change=True"
    assert message(exc) == "--study: resume it with --sampler tpe and --allow-sampler-change"
    own = PlanError(Text(ref("spaces"), " is empty"), setting="spaces")
    assert message(own) == "--space is empty"  # names its own setting: no prefix


def test_every_setting_has_a_flag_and_its_help_names_flags() -> None:
    for setting in settings.SETTINGS.values():
        assert setting.flag.startswith("--") and settings.flag_of(setting.name) == setting.flag
        text = settings.help_of(setting)
        assert "{" not in text  # every {setting} in a help text is a declared one
