"""The `goal` dialect: a filter as the paper's integer goals (section 3.1), before instruction selection."""

from __future__ import annotations

from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from cain.goal import Goal


@irdl_attr_definition
class GoalAttr(Data[Goal]):
    """A goal, printed as one centred square integer matrix per channel (row 0 to the north):
    `#goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]>`, or `#goal.goal<[[..]], [[..]]>` for two channels."""

    name = "goal.goal"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Goal:
        with parser.in_angle_brackets():
            matrices = parser.parse_comma_separated_list(
                parser.Delimiter.NONE,
                lambda: parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE,
                    lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer),
                ),
            )
        for m in matrices:
            if len(m) % 2 == 0 or any(len(row) != len(m) for row in m) or len(m) != len(matrices[0]):
                parser.raise_error("goal matrices must be square, of one odd size, centred on offset (0, 0)")
        return Goal.from_matrices(matrices)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string(
            ", ".join(
                "[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in m) + "]"
                for m in self.data.matrices(channels=max(self.data.channels, 1))
            )
        )
        printer.print_string(">")

    def verify(self) -> None:
        if not isinstance(self.data, Goal):
            raise VerifyException("goal.goal holds a Goal")
