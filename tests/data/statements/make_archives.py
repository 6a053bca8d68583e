#!/usr/bin/env python3
# Makes the packed statements tst_statementarchive reads, from the plain ones beside them:
# Alipay's bill ZIP (GBK entry names, no UTF-8 flag, the detail beside its summary), WeChat
# Pay's gzipped bill (one member, and two), a stored ZIP with a UTF-8 name, an Excel
# workbook's shape, and a ZIP of two statements. Run it from anywhere: python3 make_archives.py
import gzip, io, os, zipfile
d = out = os.path.dirname(os.path.abspath(__file__))
alipay=open(f'{d}/alipay_gbk.csv','rb').read()
summary='#支付宝业务明细查询（汇总）\r\n#账号：[20880000000000000156]\r\n#交易合计：2笔\r\n'.encode('gbk')
detail='20880000000000000156_20261201_业务明细.csv'
summ='20880000000000000156_20261201_业务明细(汇总).csv'
# Alipay's archive: GBK names, no UTF-8 flag. Written with ASCII stand-ins of the same length, then patched.
def stand(name, ch):
    g=name.encode('gbk'); prefix=b'20880000000000000156_20261201_'
    return (prefix + ch*(len(g)-len(prefix)-4) + b'.csv'), g
ps,gs=stand(summ,b'S'); pd,gd=stand(detail,b'D')
buf=io.BytesIO()
with zipfile.ZipFile(buf,'w',zipfile.ZIP_DEFLATED) as z:
    z.writestr(ps.decode(), summary)
    z.writestr(pd.decode(), alipay)
b=buf.getvalue().replace(ps,gs).replace(pd,gd)
open(f'{out}/alipay_bill.csv.zip','wb').write(b)
wechat=open(f'{d}/wechat_bom_crlf.csv','rb').read()
open(f'{out}/wechat_bill.csv.gz','wb').write(gzip.compress(wechat, mtime=0))
half=len(wechat)//2
open(f'{out}/wechat_two_members.csv.gz','wb').write(gzip.compress(wechat[:half],mtime=0)+gzip.compress(wechat[half:],mtime=0))
generic=open(f'{d}/generic.csv','rb').read()
buf=io.BytesIO()
with zipfile.ZipFile(buf,'w',zipfile.ZIP_STORED) as z:
    z.writestr('对账单/generic.csv', generic)
    z.writestr('__MACOSX/对账单/._generic.csv', b'\x00\x05\x16\x07')
open(f'{out}/generic_stored.zip','wb').write(buf.getvalue())
buf=io.BytesIO()
with zipfile.ZipFile(buf,'w',zipfile.ZIP_DEFLATED) as z:
    z.writestr('[Content_Types].xml', '<Types/>')
    z.writestr('xl/workbook.xml', '<workbook/>')
open(f'{out}/workbook.xlsx','wb').write(buf.getvalue())
buf=io.BytesIO()
with zipfile.ZipFile(buf,'w',zipfile.ZIP_DEFLATED) as z:
    z.writestr('december.csv', generic)
    z.writestr('november.csv', generic)
open(f'{out}/two_statements.zip','wb').write(buf.getvalue())
