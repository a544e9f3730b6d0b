"""The checks of chapter 0's exercises: the text protocol and its parser.

Each check judges the learner's chapter on replies made fresh for it
(`chapter0_replies`), so a parser or a stop list fitted to one reply fails on the
next, and the verdict quotes the reply that was tried.  Where an exercise also asks
for corpus cases (2 and 5), the whole corpus must give what it expects.
"""

from __future__ import annotations

import importlib
import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from llm import Reply
from llm.cassette import CassetteError, read_cassette

from . import chapter0_replies as made
from .chapter0_corpus import (
    CHINESE_LINE,
    SHIPPED,
    corpus,
    corpus_problem,
    first_miss,
    missed,
)
from .check import (
    LIVE,
    Exercise,
    Said,
    Verdict,
    fresh_random,
    named_file,
    run_chapter,
    run_replies,
)

MOST_STOPS = 4  # what OpenAI accepts; some compatible servers take fewer


# --- 0.1 -------------------------------------------------------------------------------


def three_strikes(words: list[str]) -> Verdict:
    """The learner's cassette of three malformed replies ends the run at the third; and the
    same replies with a fresh well-formed one put second run on, since the count restarts."""
    path = named_file(words, Said("cassette of three replies", "三条回复的录像带"), "0.1")
    _, entries = read_cassette(path)
    result = run_chapter("v0_react_text", path)
    seen = Said(
        f"the run ended with `{result.stop}` after {result.turns} turns "
        f"({result.format_errors} format errors, {result.tool_calls} tool calls)",
        f"运行在 {result.turns} 轮后以 `{result.stop}` 结束"
        f"（{result.format_errors} 个格式错误，{result.tool_calls} 次工具调用）",
    )
    hint = Said(
        "three malformed replies in a row end the run with format_errors",
        "连续三条格式错误的回复会让运行以 format_errors 结束",
    )
    if len(entries) != 3:
        count = Said(
            f"; the cassette holds {len(entries)} replies", f"；录像带里有 {len(entries)} 条回复"
        )
        return Verdict(False, Said(seen.en + count.en, seen.zh + count.zh), hint)
    if not (result.stop == "format_errors" and result.turns == 3 and result.format_errors == 3):
        return Verdict(False, seen, hint)
    rng = fresh_random()
    good = made.action(rng, made.english(rng), runnable=True)
    first, *rest = (entry["reply"] for entry in entries)
    again = run_replies("v0_react_text", first, made.text_reply(good.text), *rest)
    tried = Said(
        f"; with the well-formed {good.text!r} put second it ended with `{again.stop}` "
        f"after {again.format_errors} format errors and {again.tool_calls} tool call(s)",
        f"；把格式正确的 {good.text!r} 放在第二条后，它在 {again.format_errors} 个格式错误、"
        f"{again.tool_calls} 次工具调用后以 `{again.stop}` 结束",
    )
    seen = Said(seen.en + tried.en, seen.zh + tried.zh)
    if again.stop == "error" and again.format_errors == 3 and again.tool_calls == 1:
        return Verdict(True, seen)  # the replies ran out: a good reply restarts the count
    hint = Said(
        "a well-formed reply between them restarts the count (errors_in_a_row = 0), so the "
        "run goes on until the cassette runs out",
        "中间一条格式正确的回复会让计数重新开始（errors_in_a_row = 0），运行一直到录像带用完",
    )
    return Verdict(False, seen, hint)


# --- 0.2 -------------------------------------------------------------------------------


def one_more_variant(words: list[str]) -> Verdict:
    """Fresh actions whose Action Input sits in single backticks parse as those actions; a
    backticked shell command stays a format error, and backticks inside the JSON stay,
    around a command or around braces in a file's text."""
    rng = fresh_random()
    wrapped, surely = [], rng.randrange(6)  # one at least holds backticks of its own
    for number in range(6):
        tool, args = made.arguments(rng)
        if number == surely or rng.random() < 0.3:
            args = {"command": f"echo `date` > {rng.choice(made.NAMES)}.log"}
            tool = "bash"
        written = f"`{made.as_json(rng, args)}`"
        wrapped.append(made.action(rng, made.english(rng), tool=tool, args=args, written=written))
    inside = {"command": f"echo `{rng.choice(made.NAMES)}` done"}
    inner = made.action(rng, made.english(rng), tool="bash", args=inside)
    quoted = {"path": f"{rng.choice(made.NAMES)}.md", "content": 'Set it to `{"debug": true}`.'}
    braces = made.action(rng, made.english(rng), tool="write_file", args=quoted)
    shell = made.error(f"Action: bash\nAction Input: `ls -la {rng.choice(made.FOLDERS)}`")
    tool, args = made.arguments(rng)
    fence = f"```json\n{made.as_json(rng, args)}\n```"
    fenced = made.action(rng, made.english(rng), tool=tool, args=args, written=fence)
    miss = first_miss([inner, braces, *wrapped, shell, fenced])
    if miss:
        reply, got = miss
        if reply is shell:
            hint = Said(
                "only JSON in backticks is an Action Input: a backticked shell command must "
                "stay a format error",
                "只有反引号里的 JSON 才是行动输入：反引号里的 shell 命令必须仍是格式错误",
            )
        elif reply is inner or reply is braces:
            hint = Said(
                "backticks inside a JSON string belong to it: take off only the pair around "
                "the whole input",
                "JSON 字符串里的反引号属于字符串本身：只去掉包住整个输入的那一对",
            )
        elif reply is fenced:
            hint = Said("a ```json fence must still work", "```json 代码围栏必须仍然有效")
        else:
            hint = Said(
                "let `_unfence` take off one backtick on each side of the whole input",
                "让 `_unfence` 去掉整个输入两边各一个反引号",
            )
        return Verdict(False, missed(reply, got), hint)
    problem = corpus_problem(corpus(), "single-backticks")
    if problem:
        return problem
    seen = Said(
        f"{len(wrapped)} fresh replies with the input in backticks parse as their actions "
        f"(one was {wrapped[0].text!r}), a backticked shell command stays a format error, "
        "and every corpus case gives what it expects",
        f"{len(wrapped)} 条新生成的、输入包在反引号里的回复都解析成了各自的行动（其中一条是 "
        f"{wrapped[0].text!r}），反引号里的 shell 命令仍是格式错误，语料的每一条都符合期望",
    )
    return Verdict(True, seen)


# --- 0.3 -------------------------------------------------------------------------------


class StoppingProvider:
    """A model that honours stop sequences as a server does, on replies the check wrote.

    Each reply is cut where the first of the stop sequences sent with its request
    begins, and what each request sent is kept: the check judges the request the
    chapter makes, not the constant it comes from.
    """

    name = "check:stop-sequences"

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.sent: list[list[str]] = []
        self.whole: list[str] = []  # the replies that came back uncut

    def complete(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        stops = list(stop or [])
        self.sent.append(stops)
        if not self.texts:
            raise CassetteError("the check has no more replies")
        text = self.texts.pop(0)
        cuts = [text.find(sequence) for sequence in stops if sequence and sequence in text]
        if cuts:
            return Reply([{"type": "text", "text": text[: min(cuts)]}], "stop_sequence")
        self.whole.append(text)
        return Reply([{"type": "text", "text": text}], "end_turn")


def run_on(model: StoppingProvider, task: str) -> Any:
    """Chapter 0's run with this model, on a fresh copy of its demo workspace: its
    ReactRunResult (the chapter is imported only when a check runs, as in
    `chapter0_corpus.outcome`)."""
    spec = importlib.import_module("v0_react_text.__main__").CHAPTER
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        return spec.run(task, model=model, workdir=workdir)


def full_width_stop(words: list[str]) -> Verdict:
    """Fresh actions that run on into an invented observation, one in each spelling (the
    ASCII and the full-width colon, bold or not), in a fresh order: the stop sequences the
    chapter sends must cut every one, at most four of them."""
    rng = fresh_random()
    spellings = list(made.INVENTED)
    rng.shuffle(spellings)
    texts = [
        made.action(rng, made.english(rng), runnable=True).text
        + made.invented_observation(rng, how)
        for how in spellings
    ]
    # The word alone is no observation: a thought may say it, and must come back whole.
    said = rng.choice(["The Observation above shows", "Observation of the last run says"])
    failed = rng.randrange(2, 9)
    command = json.dumps({"command": rng.choice(["ls", "pwd", "ls -a"])})
    mention = f"Thought: {said} {failed} failures.\nAction: bash\nAction Input: {command}"
    ending = made.final(rng, made.english(rng))
    at = rng.randrange(len(texts) + 1)
    provider = StoppingProvider([*texts[:at], mention, *texts[at:], ending.text])
    result = run_on(provider, "An exercise check: run five commands, then finish.")
    sent = provider.sent[0] if provider.sent else []
    if any(len(stops) > MOST_STOPS for stops in provider.sent):
        seen = Said(
            f"the chapter sent {len(sent)} stop sequences", f"本章发送了 {len(sent)} 个停止序列"
        )
        hint = Said(
            f"OpenAI accepts at most {MOST_STOPS} stop sequences, some servers fewer",
            f"OpenAI 最多接受 {MOST_STOPS} 个停止序列，有些服务更少",
        )
        return Verdict(False, seen, hint)
    whole = [texts.index(text) for text in provider.whole if text in texts]
    if whole:
        reply, spelt = texts[whole[0]], spellings[whole[0]]
        seen = Said(
            f"the stop sequences sent, {sent!r}, did not cut the reply {reply!r}",
            f"发送的停止序列 {sent!r} 没有切断回复 {reply!r}",
        )
        if "full-width" in spelt:
            hint = Said(
                'add "Observation：" (a full-width colon) to STOP in agent.py',
                '在 agent.py 的 STOP 里加上 "Observation："（全角冒号）',
            )
        else:
            hint = Said(
                'keep "Observation:" in STOP: the ASCII colon is still the common one',
                '保留 STOP 里的 "Observation:"：ASCII 冒号仍然最常见',
            )
        return Verdict(False, seen, hint)
    if mention not in provider.whole:
        seen = Said(
            f"the stop sequences sent, {sent!r}, cut the reply {mention!r}",
            f"发送的停止序列 {sent!r} 切断了回复 {mention!r}",
        )
        hint = Said(
            "a stop sequence ends with the colon: the word alone is no observation",
            "停止序列要带上冒号：单独这个词并不是观察",
        )
        return Verdict(False, seen, hint)
    seen = Said(
        f"the stop sequences sent, {sent!r}, cut {len(texts)} fresh replies at their "
        f"invented observations ({', '.join(spellings)}); the run ended with `{result.stop}`",
        f"发送的停止序列 {sent!r} 在编造的观察处切断了 {len(texts)} 条新生成的回复"
        f"（{'、'.join(spellings)}）；运行以 `{result.stop}` 结束",
    )
    done = result.tool_calls == len(texts) + 1 and result.hallucinated_observations == 0
    if result.stop == "done" and done:
        return Verdict(True, seen)
    hint = Said(
        "the replies cut at their observations should run five tools and finish",
        "在观察处切断的回复应当运行五个工具然后结束",
    )
    return Verdict(False, seen, hint)


# --- 0.5 -------------------------------------------------------------------------------


def chinese_replies(rng: random.Random) -> list[made.Reply]:
    """Fresh replies with translated keywords, alone or mixed with English ones, in every
    style the parser reads in English, each style once at least (in a fresh order)."""
    styles = rng.sample(made.CHINESE_STYLES, len(made.CHINESE_STYLES))
    styles += [rng.choice(made.CHINESE_STYLES) for _ in range(7 - len(styles))]
    replies = []
    for style in styles[:5]:  # action or input in Chinese: a reply may write no Thought:
        spelling = made.chinese(rng, ("action", "input"), style)
        replies.append(made.action(rng, spelling, zh=rng.random() < 0.8))
    for style in styles[5:7]:
        replies.append(made.final(rng, made.chinese(rng, ("final",), style), zh=True))
    return replies


def chinese_keywords(words: list[str]) -> Verdict:
    """Fresh replies with 思考：/行动：/行动输入：/最终答案： parse to their steps; English
    replies still do; a keyword in the middle of a line, or inside the JSON, is not one;
    and the corpus holds the moved case and two more of the learner's own."""
    rng = fresh_random()
    zh = chinese_replies(rng)
    english = [made.action(rng, made.english(rng)), made.final(rng, made.english(rng))]
    content = {"path": "prompt.txt", "content": f"思考：{made.thought(rng, True)}\n行动：bash\n"}
    written = json.dumps(content, ensure_ascii=False)  # the keywords as they are, unescaped
    spelling = made.chinese(rng, ("action", "input"))
    inside = made.action(rng, spelling, tool="write_file", args=content, written=written, zh=True)
    command = json.dumps({"command": "ls"})
    prose = made.error(f"我打算这样做，行动：bash\n参数是 行动输入：{command}")
    miss = first_miss([*english, *zh, inside, prose])
    if miss:
        reply, got = miss
        if any(reply is one for one in english):
            hint = Said("the English keywords must still work", "英文关键字必须仍然有效")
        elif reply is prose:
            hint = Said(
                "a keyword counts only at the start of a line, in Chinese as in English",
                "关键字只在行首才算数，中文和英文一样",
            )
        elif reply is inside:
            hint = Said(
                "keywords inside the Action Input's JSON are text: recognise keyword lines, "
                "never replace words in the whole reply",
                "行动输入的 JSON 里的关键字只是文字：识别关键字行，不要在整条回复里替换词语",
            )
        else:
            hint = Said(
                "accept 思考, 行动, 行动输入 and 最终答案 with either colon, alone or mixed "
                "with English keywords",
                "接受 思考、行动、行动输入 和 最终答案，两种冒号都行，单独使用或与英文关键字混用",
            )
        return Verdict(False, missed(reply, got), hint)
    cases = corpus()
    problem = corpus_problem(cases, "zh-translated-keywords")
    if problem:
        return problem
    # Cases told apart by their words: a copy with a space or a line more is no case more.
    translated = {" ".join(c["text"].split()) for c in cases if CHINESE_LINE.search(c["text"])}
    translated.discard(" ".join(SHIPPED["zh-translated-keywords"].split()))
    if len(translated) < 2:
        seen = Said(
            f"the corpus holds {len(translated)} case(s) of translated keywords besides "
            "`zh-translated-keywords`",
            f"除了 `zh-translated-keywords`，语料里有 {len(translated)} 条翻译关键字的例子",
        )
        hint = Said(
            "add two cases of your own, for example a 最终答案： reply and one that mixes "
            "Thought: with 行动：",
            "再加两条你自己的，例如一条 最终答案： 回复，和一条把 Thought: 与 行动： 混用的",
        )
        return Verdict(False, seen, hint)
    seen = Said(
        f"{len(zh)} fresh replies with translated keywords parse to their steps (one was "
        f"{zh[0].text!r}), English ones still do, and the corpus holds "
        f"{len(translated)} more case(s) of your own, all as expected",
        f"{len(zh)} 条新生成的中文关键字回复都解析成了各自的步骤（其中一条是 {zh[0].text!r}），"
        f"英文回复照旧，语料里另有 {len(translated)} 条你自己的例子，全部符合期望",
    )
    return Verdict(True, seen)


EXERCISES = {
    "0.1": Exercise(Said("Three strikes", "三振出局"), three_strikes),
    "0.2": Exercise(Said("Accept one more variant", "多接受一种变体"), one_more_variant),
    "0.3": Exercise(Said("Add the full-width stop sequence", "加上全角停止序列"), full_width_stop),
    "0.4": Exercise(Said("Take the stop sequences away", "拿掉停止序列"), unchecked=LIVE),
    "0.5": Exercise(Said("Support Chinese keywords", "支持中文关键字"), chinese_keywords),
    "0.6": Exercise(Said("Measure the fragility", "量一量有多脆弱"), unchecked=LIVE),
}
