"""Drives Debian's chromium (headless, through chromium-driver and Selenium) over `tvimport serve`.

Usage: browser_check.py BASE_URL TOKEN SCREENSHOT_DIR
Prints one line per check ("ok NAME" or "FAIL NAME: why") and exits 1 if any failed; the Swift
test (Tests/ServeTests/BrowserTests.swift) reads the lines and the database.
"""
import struct
import sys
import time
import zlib

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, token, shots = sys.argv[1], sys.argv[2], sys.argv[3]
failures = 0



def replaced(element):
    """A wait condition: the page that held `element` has been replaced (a form's answer arrived).
    This chromium reports a detached node as "does not belong to the document" rather than as
    a stale element, so any error from asking the node counts as replaced."""
    def condition(_driver):
        try:
            element.is_enabled()
            return False
        except Exception:
            return True
    return condition

def check(name, condition, why=""):
    global failures
    if condition:
        print(f"ok {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


def png_colours(data):
    """The number of distinct pixel colours of an 8-bit, non-interlaced RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    previous, colours, offset = bytearray(stride), set(), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, channels * 7):   # a sample of each line is enough
            colours.add(bytes(line[x:x + 3]))
        previous = line
    return len(colours)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=412,915"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def no_alert(driver):
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        return True


driver = browser()
try:
    pages = [("home", "/"), ("channel", "/channels/alpha.test"), ("channels", "/model/Channel"),
             ("programmes", "/model/Programme?title=Show%203&sort=start"), ("detail", "/model/Channel/alpha.test"),
             ("evil", "/channels/evil.test")]
    for name, path in pages:
        driver.get(base + path)
        png = driver.get_screenshot_as_png()
        with open(f"{shots}/{name}.png", "wb") as f:
            f.write(png)
        colours = png_colours(png)
        check(f"{name} screenshot is not blank", colours >= 3, f"{colours} colours")
        check(f"{name} has no alert", no_alert(driver))
        check(f"{name} has no injected element", not driver.find_elements(By.CSS_SELECTOR, "main script, main img[src=x], main b"))
    driver.get(base + "/")
    body = driver.find_element(By.TAG_NAME, "body").text
    check("home lists the channels", "Alpha One" in body and 'Evil <b>"Channel"</b>' in body, body[:300])
    driver.get(base + "/channels/evil.test")
    check("hostile title shown as text", "<script>alert('x')</script>" in driver.find_element(By.TAG_NAME, "main").text)
    driver.get(base + "/model/Programme?title=Show%203")
    check("filtered list has one row", len(driver.find_elements(By.CSS_SELECTOR, "table tr")) == 2)

    # Sign in with the token, edit, reload, undo.
    driver.get(base + "/login")
    driver.find_element(By.NAME, "token").send_keys(token)
    login = driver.find_element(By.CSS_SELECTOR, "main form button")
    login.click()
    WebDriverWait(driver, 30).until(replaced(login))   # the cookie is set
    driver.get(base + "/model/Channel/alpha.test")
    field = driver.find_element(By.NAME, "customName")
    field.clear()
    field.send_keys("Browser Name")
    save = driver.find_element(By.XPATH, "//button[text()='Save']")
    save.click()
    WebDriverWait(driver, 30).until(replaced(save))   # the POST was answered
    driver.refresh()
    check("edit shows after reload", driver.find_element(By.NAME, "customName").get_attribute("value") == "Browser Name")
    driver.get(base + "/")
    check("edit shows on the guide", "Browser Name" in driver.find_element(By.TAG_NAME, "body").text)
    print("edited", flush=True)
    sys.stdin.readline()   # the Swift test checks the database, then lets us go on
    driver.get(base + "/model/Channel/alpha.test")
    undo = driver.find_element(By.XPATH, "//button[starts-with(text(),'Undo the edit')]")
    undo.click()
    # The click submits a form: a navigation started at once could abort the POST before the
    # server sees it, so wait until the page the POST answers with has replaced this one.
    WebDriverWait(driver, 30).until(replaced(undo))
    value = None
    for _ in range(50):
        driver.get(base + "/model/Channel/alpha.test")
        value = driver.find_element(By.NAME, "customName").get_attribute("value")
        if value == "":
            break
        time.sleep(0.2)
    check("undo reverts", value == "", repr(value))
finally:
    driver.quit()

# A browser without the session cookie posts the form: refused, nothing saved.
anonymous = browser()
try:
    anonymous.get(base + "/model/Channel/alpha.test")
    sender = anonymous.find_element(By.TAG_NAME, "body")
    anonymous.execute_script(
        "const f = document.createElement('form'); f.method = 'post'; f.action = location.pathname;"
        "const i = document.createElement('input'); i.name = 'customName'; i.value = 'Hacked'; f.appendChild(i);"
        "document.body.appendChild(f); f.submit();")
    # Read the answer to the post (a 401 page), not the page that sent it.
    WebDriverWait(anonymous, 30).until(replaced(sender))
    text = anonymous.find_element(By.TAG_NAME, "body").text
    check("anonymous post refused", "401" in text, text[:200])
finally:
    anonymous.quit()
print("done", flush=True)
sys.exit(1 if failures else 0)
