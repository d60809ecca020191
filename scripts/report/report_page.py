"""report_page.py - the report's one HTML page: every figure's SVG inline (its ids prefixed so
that the figures of one page never share an id), a caption, and the numbers behind it as a
table. No script, no external resource (a Content-Security-Policy says so to the browser); the
page is also well-formed XML, so a test can parse it whole.

Owns escaping: every string that came from the database goes through text() (control
characters shown as \\xNN, then &, <, >, " and ' escaped), never straight into the markup.
"""
import html
import re

from report_names import clean

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;
max-width:1180px;padding:0 18px 40px;color:#1d1d1d;background:#fff}
h1{font-size:22px;margin:22px 0 4px}h2{font-size:18px;margin:34px 0 6px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:22px 0 4px}
.meta{color:#444;font-size:13px}.meta td{padding:0 14px 0 0;vertical-align:top}
figure{margin:10px 0 4px}figure svg{max-width:100%;height:auto;display:block}
figcaption,.note{color:#555;font-size:12.5px;margin:2px 0 6px}
table.data{border-collapse:collapse;font-size:12px;margin:6px 0 12px}
table.data caption{text-align:left;color:#555;font-size:12px;padding:2px 0}
table.data th,table.data td{border-bottom:1px solid #e5e5e5;padding:2px 8px;text-align:left;vertical-align:top}
table.data th{background:#f4f4f4;font-weight:600}
table.data td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto}details{margin:4px 0 12px}summary{cursor:pointer;color:#333}
nav ul{margin:4px 0;padding-left:20px}code{font-size:12.5px}
"""

_NUM = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)( ?%)?( \[.*\])?$")


def text(s):
    """Database text for the page: one line, control characters shown, markup escaped."""
    return html.escape(clean(s), quote=True)


def _svg_inline(path, prefix, alt):
    """The SVG file at path as inline markup: no XML prolog or DOCTYPE, every id and every
    reference to one (href="#x", url(#x)) prefixed, labelled for assistive technology."""
    with open(path, encoding="utf-8") as f:
        s = f.read()
    s = re.sub(r"<\?xml[^>]*\?>\s*", "", s)
    s = re.sub(r"<!DOCTYPE[^>]*>\s*", "", s)
    s = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', s)
    s = re.sub(r'(xlink:href|href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', s)
    s = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}-{m.group(1)})", s)
    s = s.replace("<svg ", f'<svg role="img" aria-label="{text(alt)}" ', 1)
    return s.strip()


class Page:
    def __init__(self, title):
        self.title = title
        self.parts = []
        self.toc = []
        self.n_fig = 0

    def contents(self):
        """Where the list of sections goes (filled in by render)."""
        self.parts.append(None)

    def h(self, level, words, anchor=None):
        a = f' id="{anchor}"' if anchor else ""
        if anchor and level == 2:
            self.toc.append((anchor, words))
        self.parts.append(f"<h{level}{a}>{text(words)}</h{level}>")

    def p(self, words, cls=None):
        c = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{c}>{text(words)}</p>")

    def raw(self, markup):
        """Markup this module wrote itself (never database text)."""
        self.parts.append(markup)

    def table(self, head, rows, caption=None, tid=None):
        i = f' id="{tid}"' if tid else ""
        out = [f'<div class="scroll"><table class="data"{i}>']
        if caption:
            out.append(f"<caption>{text(caption)}</caption>")
        out.append("<thead><tr>" + "".join(f'<th scope="col">{text(h)}</th>' for h in head) + "</tr></thead><tbody>")
        for r in rows:
            cells = []
            for c in r:
                c = "" if c is None else str(c)
                cls = ' class="n"' if _NUM.match(c) else ""
                cells.append(f"<td{cls}>{text(c)}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
        self.parts.append("".join(out))

    def figure(self, fig, tid):
        """A Figure of report_figures: its SVG (when drawn), caption, note, and table."""
        if fig.file:
            self.n_fig += 1
            prefix = f"f{self.n_fig}"
            name = fig.file.rsplit("/", 1)[-1]
            self.parts.append(f'<figure id="fig-{tid}">{_svg_inline(fig.file, prefix, fig.alt)}'
                              f"<figcaption>{text(fig.alt)} (file <code>{text(name)}</code>)</figcaption></figure>")
        if fig.note:
            self.p(fig.note, "note")
        if fig.rows or fig.file:
            self.table(fig.head, fig.rows, caption=f"The numbers behind: {fig.title}", tid=f"t-{tid}")
        if fig.details:
            summary, head, rows = fig.details
            self.parts.append(f"<details><summary>{text(summary)}</summary>")
            self.table(head, rows, tid=f"t-{tid}-all")
            self.parts.append("</details>")

    def render(self):
        toc = "".join(f'<li><a href="#{a}">{text(w)}</a></li>' for a, w in self.toc)
        return ("<!DOCTYPE html>\n"
                '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>'
                '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
                'style-src \'unsafe-inline\'; img-src data:"/>'
                '<meta name="viewport" content="width=device-width, initial-scale=1"/>'
                f"<title>{text(self.title)}</title><style>{STYLE}</style></head><body>\n"
                + "\n".join(f"<nav><ul>{toc}</ul></nav>" if x is None else x for x in self.parts)
                + "\n</body></html>\n")
