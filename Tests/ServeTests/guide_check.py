"""Renders the guide's pages in Debian's chromium (headless, through chromium-driver and Selenium)
at a phone's width and a desktop's, checks each for horizontal overflow and images without alt
text, and keeps a screenshot of each (Tests/ServeTests/GuideBrowserTests.swift).

Usage: guide_check.py BASE_URL TOKEN SCREENSHOT_DIR NAME=PATH... [--signed-in NAME=PATH...]
Prints one line per check ("ok NAME" or "FAIL NAME: why") and exits 1 if any failed.
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, token, shots = sys.argv[1], sys.argv[2], sys.argv[3]
anonymous, signed_in, target = [], [], None
for argument in sys.argv[4:]:
    if argument == "--signed-in":
        target = signed_in
        continue
    name, path = argument.split("=", 1)
    (signed_in if target is signed_in else anonymous).append((name, path))
widths = (375, 1280)
failures = 0


def check(name, condition, why=""):
    global failures
    if condition:
        print(f"ok {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL {name}: {why}", flush=True)


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,900"):
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def render(name, path):
    for width in widths:
        # The viewport exactly this wide, as a phone (the page's viewport meta applies) or a desktop.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        driver.get(base + path)
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(
            "return document.readyState === 'complete' && Array.from(document.images).every(i => i.complete)"))
        label = f"{name} at {width} px"
        overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        check(f"{label}: no horizontal overflow", overflow <= 0, f"{overflow} px wider than the window")
        images = driver.find_elements(By.TAG_NAME, "img")
        missing = [i.get_attribute("src") for i in images if not (i.get_attribute("alt") or "").strip()]
        check(f"{label}: every image has alt text", not missing, f"{missing[:5]}")
        broken = [i.get_attribute("src") for i in images if driver.execute_script("return arguments[0].naturalWidth", i) == 0]
        check(f"{label}: every image loaded", not broken, f"{broken[:5]}")
        check(f"{label}: one h1 and a main landmark",
              len(driver.find_elements(By.TAG_NAME, "h1")) == 1 and len(driver.find_elements(By.TAG_NAME, "main")) == 1)
        unnamed = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "main a")
                   if not (a.text.strip() or a.get_attribute("aria-label") or a.find_elements(By.CSS_SELECTOR, "img[alt]"))]
        check(f"{label}: every link says where it goes", not unnamed, f"{unnamed[:5]}")
        # The whole page, as tall as it is (at most 4000 px), in one picture.
        height = min(driver.execute_script("return document.documentElement.scrollHeight"), 4000)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        png = driver.get_screenshot_as_png()
        with open(f"{shots}/{name}-{width}.png", "wb") as f:
            f.write(png)
        check(f"{label}: screenshot kept", len(png) > 1000)


try:
    for name, path in anonymous:
        render(name, path)
    if signed_in:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.get(base + "/login")
        driver.find_element(By.NAME, "token").send_keys(token)
        button = driver.find_element(By.CSS_SELECTOR, "main form button")
        button.click()
        WebDriverWait(driver, 30).until(lambda d: "/login" not in d.current_url)
        for name, path in signed_in:
            render(name, path)
            check(f"{name}: has a form to edit", len(driver.find_elements(By.CSS_SELECTOR, "main form input[type=text]")) > 0)
finally:
    driver.quit()
print("done", flush=True)
sys.exit(1 if failures else 0)
